"""Minimal safetensors reader/writer (no `safetensors` package on this machine).

File layout: u64 little-endian header length N, N bytes of JSON, then raw little-endian
tensor bytes. The header maps each tensor name to {dtype, shape, data_offsets:[begin,end)}
relative to the start of the data section, plus an optional "__metadata__" dict of
string -> string. We pack tensors in header order with no gaps and pad the JSON with spaces
so the data section starts 8-byte aligned (what the C++ loader may rely on for mmap).
"""
import json
import os
import struct

import numpy as np
import torch

_TO_ST = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
          torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
          torch.uint8: "U8", torch.bool: "BOOL", torch.float64: "F64"}
_NP = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64,
       "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def save_file(tensors, path, metadata=None):
    """tensors: dict name -> torch.Tensor (order kept). metadata: dict str -> str."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:  # numpy has no bf16: ship the raw 16-bit pattern
            raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            raw = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _TO_ST[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * ((8 - (8 + len(hj)) % 8) % 8)
    # A killed export never leaves a truncated file under the real name, and processes writing the
    # same file at once (tests run in parallel) each rename their own complete copy.
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n)), 8 + n


def load_file(path):
    """Returns (dict name -> torch.Tensor, metadata dict). Validates offsets against file size."""
    header, start = read_header(path)
    meta = header.pop("__metadata__", {}) or {}
    with open(path, "rb") as f:
        data = f.read()[start:]
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        if not (0 <= b <= e <= len(data)):
            raise ValueError(f"{path}: tensor {name} offsets {b}:{e} outside data ({len(data)})")
        dt = info["dtype"]
        if dt == "BF16":
            arr = np.frombuffer(data[b:e], dtype="<i2").copy()
            t = torch.from_numpy(arr).view(torch.bfloat16)
        else:
            arr = np.frombuffer(data[b:e], dtype=np.dtype(_NP[dt]).newbyteorder("<")).copy()
            t = torch.from_numpy(arr.astype(_NP[dt]))
        n = int(np.prod(info["shape"])) if info["shape"] else 1
        if t.numel() != n:
            raise ValueError(f"{path}: tensor {name} has {t.numel()} elements, shape says {n}")
        out[name] = t.reshape(info["shape"])
    return out, meta
