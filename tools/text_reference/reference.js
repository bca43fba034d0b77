#!/usr/bin/env node
// Hugging Face's own tokenizer (the Rust `tokenizers` crate, napi build @anush008/tokenizers) on
// a request from tests/test_text_tokenizer.cpp; writes what it computed as JSON.
//
// usage: node reference.js MODULES_DIR REQUEST.json OUTPUT.json
//   MODULES_DIR: the node_modules folder tools/install-text-reference.sh filled.
//   REQUEST: {"mode": "encode", "tokenizer": PATH, "texts": [...], "decode_every": N, "decode_ids": [[id...]...]}
//     -> {"encode_special": [[id...]...], "encode_plain": [[id...]...] (add_special_tokens true / false),
//         "decoded": [{"index": i, "text": decode(ids, false), "skipped": decode(ids, true)}...] for every
//         N-th text's encode_special ids, "decoded_ids": [{"text", "skipped"}...] for decode_ids}
//   REQUEST: {"mode": "pre_tokenize", "pre_tokenizers": [JSON...], "texts": [...]}
//     -> {"pieces": [[[piece...] per text] per pre-tokenizer]}
// Exits 2 with a message when the request cannot be served.
'use strict';
const fs = require('fs');
const path = require('path');

function fail(message) {
  process.stderr.write(`reference.js: ${message}\n`);
  process.exit(2);
}

// A tokenizer around a pre-tokenizer: a byte vocab, no merges (only its pre-tokenizer is used).
function preTokenizerHost(Tokenizer, preTokenizer) {
  const vocab = {};
  for (let i = 0; i < 256; i++) vocab[String.fromCharCode(i)] = i;
  return Tokenizer.fromString(JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: preTokenizer, post_processor: null, decoder: null,
    model: {type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
            end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: []},
  }));
}

async function encodeAll(tokenizer, texts, addSpecialTokens) {
  const out = [];
  const batch = 256;
  for (let i = 0; i < texts.length; i += batch) {
    const encodings = await tokenizer.encodeBatch(texts.slice(i, i + batch), {addSpecialTokens});
    for (const e of encodings) out.push(e.getIds());
  }
  return out;
}

async function encodeMode(Tokenizer, request) {
  const tokenizer = Tokenizer.fromFile(request.tokenizer);
  const result = {
    encode_special: await encodeAll(tokenizer, request.texts, true),
    encode_plain: await encodeAll(tokenizer, request.texts, false),
    decoded: [],
    decoded_ids: [],
  };
  const every = request.decode_every || 0;
  for (let i = 0; every > 0 && i < request.texts.length; i += every) {
    const ids = result.encode_special[i];
    result.decoded.push({index: i, text: await tokenizer.decode(ids, false), skipped: await tokenizer.decode(ids, true)});
  }
  for (const ids of request.decode_ids || []) {
    result.decoded_ids.push({text: await tokenizer.decode(ids, false), skipped: await tokenizer.decode(ids, true)});
  }
  return result;
}

function preTokenizeMode(Tokenizer, request) {
  const pieces = request.pre_tokenizers.map((p) => {
    const pre = preTokenizerHost(Tokenizer, p).getPreTokenizer();
    return request.texts.map((t) => pre.preTokenizeString(t).map((x) => x[0]));
  });
  return {pieces};
}

async function main() {
  const [modulesDir, requestPath, outputPath] = process.argv.slice(2);
  if (!outputPath) fail('usage: node reference.js MODULES_DIR REQUEST.json OUTPUT.json');
  let Tokenizer;
  try {
    ({Tokenizer} = require(path.join(path.resolve(modulesDir), '@anush008', 'tokenizers')));
  } catch (e) {
    fail(`cannot load @anush008/tokenizers from ${modulesDir}: ${e.message}`);
  }
  const request = JSON.parse(fs.readFileSync(requestPath, 'utf8'));
  let result;
  if (request.mode === 'encode') {
    result = await encodeMode(Tokenizer, request);
  } else if (request.mode === 'pre_tokenize') {
    result = preTokenizeMode(Tokenizer, request);
  } else {
    fail(`unknown mode ${request.mode}`);
  }
  fs.writeFileSync(outputPath, JSON.stringify(result));
}

main().catch((e) => fail(e.stack || String(e)));
