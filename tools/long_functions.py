#!/usr/bin/env python3
"""Lists the C++ function bodies longer than N lines, and the functions with more than P
parameters, in vkspec's product code.

usage: long_functions.py [--max N] [--max-params P] [ROOT]

Prints `path:line name lines` for each function whose body (opening brace line to closing brace
line) has more than N lines (default 80), longest first, then `path:line name P parameters` for
each function definition with more than P parameters (default 8: more take a parameter struct),
and exits 1 when there is any. Product
code is engine/, decoding/, cli/, frontend/, eval/, viewer/, common/ and python/ below ROOT (default: the
repository this script is in), leaving out every tests/, fuzz/ and third_party/ folder.

A brace-matching scan, not a parser: comments, string and character literals (raw strings too)
and preprocessor lines are blanked first, then a `{` at namespace or class scope opens a function
body when the text before it has a parameter list and is not an initializer (`= {`, a member's
`x_{...}` in a constructor's initializer list). Lambdas inside a body count as part of it.
"""
import os
import re
import sys

PRODUCT_DIRS = ("engine", "decoding", "cli", "frontend", "eval", "viewer", "common", "python")
SKIPPED_DIRS = {"tests", "fuzz", "third_party"}
SOURCE_ENDINGS = (".cpp", ".cc", ".h", ".hpp")


def blank_non_code(text):
    """Returns text with comments, literals and preprocessor lines replaced by spaces (newlines kept,
    a literal's quotes kept so that `extern "C"` still reads as such)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + '"')
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def collapse_groups(header):
    """Replaces the contents of every (...) and {...} group in header by nothing, innermost first."""
    prev = None
    while prev != header:
        prev = header
        header = re.sub(r"\([^()]*\)", "()", header)
        header = re.sub(r"\{[^{}]*\}", "{}", header)
    return header


CONTAINER = re.compile(r"(^|[\s;:}])(namespace|extern\s*\"\")\b|\b(class|struct|union)\b")
INIT_LIST = re.compile(r"\)\s*(?:const|noexcept|override|final|\s)*:(?!:)")
INIT_ITEM_OPEN = re.compile(r"[:,]\s*[\w:]+(\s*<[^;{}]*>)?\s*$")
LAMBDA_END = re.compile(r"\]\s*(\(\))?\s*(?:mutable|constexpr|noexcept|\s)*(->[^(){};]*)?$")
QUALIFIERS = re.compile(r"\s*(const|noexcept|override|final|mutable)\s*$")


def classify(header):
    """What a `{` at namespace or class scope opens, given the code before it since the last
    statement: 'container' (namespace, class), 'function', 'init' (a braced initializer inside a
    constructor's initializer list) or 'data' (anything else: an initializer, an enum)."""
    flat = collapse_groups(" ".join(header.split()))
    if flat.count("(") > flat.count(")"):
        # Inside a call's arguments: a lambda's body, or a braced argument.
        return "function" if LAMBDA_END.search(flat) else "init"
    if "(" not in flat:
        if CONTAINER.search(flat) and not re.search(r"\benum\b", flat) and not flat.rstrip().endswith("="):
            return "container"
        return "data"
    if INIT_LIST.search(flat):
        return "init" if INIT_ITEM_OPEN.search(flat) else "function"
    if flat.rstrip().endswith("=") or re.search(r"\benum\b", flat):
        return "data"
    if re.match(r"\s*(template\s*<[^;]*>\s*)?(class|struct|union)\b", flat) and not re.search(r"\)\s*[\w\s]*$", flat):
        return "container"
    return "function"


def function_name(header):
    """The name before the parameter list of a function header."""
    flat = " ".join(header.split())
    depth = 0
    # Cut a constructor's initializer list: the first ':' (not '::') after a top-level ')'.
    seen_close = False
    for k, ch in enumerate(flat):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                seen_close = True
        elif ch == ":" and depth == 0 and seen_close:
            if flat[k:k + 2] != "::" and (k == 0 or flat[k - 1] != ":"):
                flat = flat[:k]
                break
    flat = flat.rstrip()
    # Strip qualifiers and a trailing return type after the parameter list.
    flat = re.sub(r"->[^()]*$", "", flat).rstrip()
    while QUALIFIERS.search(flat):
        flat = QUALIFIERS.sub("", flat).rstrip()
    if not flat.endswith(")"):
        close = flat.rfind(")")
        if close < 0:
            return "?"
        flat = flat[:close + 1]
    depth = 0
    for k in range(len(flat) - 1, -1, -1):
        if flat[k] == ")":
            depth += 1
        elif flat[k] == "(":
            depth -= 1
            if depth == 0:
                before = flat[:k].rstrip()
                if before.endswith("]"):  # a lambda: name it after the call it is an argument of
                    call = re.search(r"(\w+)\s*\([^()]*$", collapse_groups(before))
                    return (call.group(1) + " " if call else "") + "lambda"
                m = re.search(r"((?:[\w:]*::)?operator\s*\S+?|~?[\w:]*~?\w+)\s*$", before)
                return m.group(1) if m else "?"
    return "?"


def parameter_count(header):
    """The number of parameters of a function header's parameter list (the last top-level (...)
    before qualifiers, a trailing return type and a constructor's initializer list)."""
    flat = " ".join(header.split())
    depth, cut = 0, len(flat)
    for k, ch in enumerate(flat):  # a constructor's initializer list starts at ':' after ')'
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == ":" and depth == 0 and ")" in flat[:k] and flat[k:k + 2] != "::" and flat[k - 1] != ":":
            cut = k
            break
    flat = re.sub(r"->[^()]*$", "", flat[:cut].rstrip()).rstrip()
    while QUALIFIERS.search(flat):
        flat = QUALIFIERS.sub("", flat).rstrip()
    close = flat.rfind(")")
    if close < 0:
        return 0
    depth, open_at = 0, -1
    for k in range(close, -1, -1):
        depth += flat[k] == ")"
        depth -= flat[k] == "("
        if depth == 0:
            open_at = k
            break
    inner = flat[open_at + 1:close].strip()
    if not inner or inner == "void":
        return 0
    count, depth = 1, 0
    for ch in inner:  # commas at the top level: not inside (), [], {} or a template's <>
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


def long_functions(path, max_lines, max_params=None):
    """Yields (line, name, lines, parameters) for each function body in path longer than
    max_lines, or (with max_params) with more than max_params parameters."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = blank_non_code(f.read())
    line = 1
    header, header_line = "", None
    stack = []  # the class name (or None for a namespace) each open '{' at namespace/class scope opened
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
        elif c == ";":
            header, header_line = "", None
        elif c == "}":
            if stack:
                stack.pop()
            header, header_line = "", None
        elif c == "{":
            kind = classify(header)
            if kind == "container":
                m = re.search(r"\b(?:class|struct|union)\s+(?:\w+\s+)*?(\w+)\s*(?:final\s*)?(?::[^:]|$)", " ".join(header.split()))
                stack.append(m.group(1) if m else None)
                header, header_line = "", None
            else:
                start_line, depth, j = line, 1, i + 1
                while j < n and depth:
                    if code[j] == "{":
                        depth += 1
                    elif code[j] == "}":
                        depth -= 1
                    elif code[j] == "\n":
                        line += 1
                    j += 1
                if kind == "function":
                    lines = line - start_line + 1
                    params = parameter_count(header) if max_params is not None else 0
                    if lines > max_lines or (max_params is not None and params > max_params):
                        name = function_name(header)
                        if stack and stack[-1] and "::" not in name and "lambda" not in name:
                            name = stack[-1] + "::" + name
                        yield header_line or start_line, name, lines, params
                    header, header_line = "", None
                else:
                    header += "{}"  # an initializer: the statement goes on
                i = j
                continue
        elif not c.isspace() or header:
            if header_line is None and not c.isspace():
                header_line = line
            header += c
        i += 1


def product_files(root):
    for top in PRODUCT_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for name in sorted(filenames):
                if name.endswith(SOURCE_ENDINGS):
                    yield os.path.join(dirpath, name)


def main(argv):
    max_lines, max_params = 80, 8
    args = list(argv)
    while args[:1] in (["--max"], ["--max-params"]) and len(args) >= 2:
        if args[0] == "--max":
            max_lines = int(args[1])
        else:
            max_params = int(args[1])
        args = args[2:]
    if any(a.startswith("-") for a in args) or len(args) > 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found, wide = [], []
    for path in product_files(root):
        for line, name, lines, params in long_functions(path, max_lines, max_params):
            rel = os.path.relpath(path, root)
            if lines > max_lines:
                found.append((lines, rel, line, name))
            if params > max_params:
                wide.append((params, rel, line, name))
    for lines, path, line, name in sorted(found, key=lambda r: (-r[0], r[1], r[2])):
        print(f"{path}:{line} {name} {lines}")
    for params, path, line, name in sorted(wide, key=lambda r: (-r[0], r[1], r[2])):
        print(f"{path}:{line} {name} {params} parameters")
    return 1 if found or wide else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
