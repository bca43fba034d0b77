#pragma once
// The caption cleaning LlamaGen applies before T5 (language/t5.py, T5Embedder.clean_caption, run
// twice as text_preprocessing does, from PixArt and DeepFloyd IF): URL-unquoting, lower case,
// URLs, HTML tags and entities, handles, CJK, dash and quote variants, IPs, ids, file names,
// runs of punctuation, shipping and download boilerplate, then whitespace. Written from the
// released code with PCRE2 (Unicode classes, as Python's re on str) and ICU (Python's lower()).
// Not ported: ftfy.fix_text's repairs (mojibake, ligatures, full-width forms) and the full HTML5
// entity table (numeric entities and amp, lt, gt, quot, apos, nbsp are decoded); a caption
// needing them is cleaned without them.
#include <string>

namespace vkspec::text {

std::string t5_caption_text(const std::string& caption);

}  // namespace vkspec::text
