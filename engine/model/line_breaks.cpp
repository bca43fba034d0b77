#include "engine/model/line_breaks.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec {

LineBreakLayout::LineBreakLayout(const GptConfig& cfg, int64_t method_slots)
    : cls_(cfg.cls_token_num),
      width_(cfg.grid_size),
      seq_len_(cfg.seq_len()),
      sequence_(cfg.seq_len() + cfg.grid_size),
      scratch_(method_slots - cfg.seq_len()) {
  if (scratch_ < 0) throw Error("placed line breaks: a cache shorter than the sequence");
}

int64_t LineBreakLayout::device_slot(int64_t s) const {
  if (s < cls_) return s;
  if (s < seq_len_) return s + (s - cls_) / width_;
  return sequence_ + 2 * (s - seq_len_);
}

namespace {

// One placed query: method query `query` itself, or the break placed after it, or padding.
struct Entry {
  int64_t query = -1;
  bool brk = false;
};

// What one block (an image's queries in a ragged batch, else all queries) becomes.
struct Block {
  std::vector<Entry> entries;
};

class Placer {
 public:
  Placer(const GptConfig& cfg, const GptQueries& q, const KvCache& cache)
      : cfg_(cfg),
        q_(q),
        cache_(cache),
        layout_(cfg, cache.slots()),
        slots_(std::min<int64_t>(cache.slots(), 32 * q.mask.words)),
        seen_(ops::AttentionMaskBuilder::unpack(q.mask, slots_)) {}

  void note_writes() const;
  Block block(int64_t first, int64_t T) const;
  // Adds block g's placed queries (padded to Tp) to out, their mask rows to mb.
  void emit(const Block& b, int64_t g, int64_t Tp, GptQueries& out, ops::AttentionMaskBuilder& mb) const;

  const LineBreakLayout& layout() const { return layout_; }

 private:
  bool holds_row_end(int64_t image, int64_t slot) const {
    if (slot < cfg_.seq_len()) return layout_.ends_row(slot);
    return layout_.ends_row(cache_.scratch_position(image, slot));
  }

  const GptConfig& cfg_;
  const GptQueries& q_;
  const KvCache& cache_;
  LineBreakLayout layout_;
  int64_t slots_;  // the method slots q's mask describes
  ops::AttentionMaskBuilder seen_;
};

void Placer::note_writes() const {
  const int64_t T = q_.queries_per_row();
  for (int64_t i = 0; i < q_.count(); ++i) {
    const int64_t p = q_.positions[static_cast<size_t>(i)], s = q_.slots[static_cast<size_t>(i)];
    if (s < cfg_.seq_len()) {
      if (p != s)
        throw Error("placed line breaks: a query at position " + std::to_string(p) + " writes sequence slot " +
                    std::to_string(s) + "; sequence slots hold their own positions (scratch slots any)");
      continue;
    }
    if (q_.per_image) {
      cache_.note_scratch_write(i / T, s, p);
    } else {
      for (int64_t g = 0; g < q_.images; ++g) cache_.note_scratch_write(g, s, p);
    }
  }
}

Block Placer::block(int64_t first, int64_t T) const {
  Block b;
  for (int64_t i = first; i < first + T; ++i) {
    b.entries.push_back({i, false});
    if (layout_.ends_row(q_.positions[static_cast<size_t>(i)])) b.entries.push_back({i, true});
  }
  return b;
}

void Placer::emit(const Block& b, int64_t g, int64_t Tp, GptQueries& out, ops::AttentionMaskBuilder& mb) const {
  const int64_t row0 = out.count(), image = q_.per_image ? g : 0;
  for (size_t k = 0; k < b.entries.size(); ++k) {
    const Entry& e = b.entries[k];
    const int64_t i = e.query, row = row0 + static_cast<int64_t>(k);
    const int64_t p = q_.positions[static_cast<size_t>(i)], own = q_.slots[static_cast<size_t>(i)];
    const int64_t dev = layout_.device_slot(own) + (e.brk ? 1 : 0);
    out.positions.push_back(p);
    out.slots.push_back(static_cast<uint32_t>(dev));
    out.rope_index.push_back(cfg_.rope_index(p) + (e.brk ? 1 : 0));
    for (int64_t s = 0; s < slots_; ++s) {
      if (!seen_.sees(i, s)) continue;
      mb.see(row, layout_.device_slot(s));
      if (s != own && holds_row_end(image, s)) mb.see(row, layout_.device_slot(s) + 1);
    }
    if (e.brk) mb.see(row, dev);
  }
  for (int64_t k = static_cast<int64_t>(b.entries.size()); k < Tp; ++k) {  // padding: its own slot only
    out.positions.push_back(cfg_.seq_len() - 1);
    out.slots.push_back(static_cast<uint32_t>(layout_.trash_slot()));
    out.rope_index.push_back(0);
    mb.see(row0 + k, layout_.trash_slot());
  }
}

void add_run(std::vector<PlacedQueries::Run>& runs, int64_t from, int64_t to) {
  if (!runs.empty() && runs.back().from + runs.back().count == from && runs.back().to + runs.back().count == to) {
    ++runs.back().count;
    return;
  }
  runs.push_back({from, to, 1});
}

}  // namespace

PlacedQueries place_line_breaks(const GptConfig& cfg, const GptQueries& q, int64_t batch_rows, const KvCache& cache) {
  Placer placer(cfg, q, cache);
  placer.note_writes();
  const int64_t T = q.queries_per_row(), blocks = q.per_image ? q.images : 1;
  if (!q.rope_index.empty()) throw Error("placed line breaks: queries already placed");
  std::vector<Block> b;
  int64_t Tp = 0;
  for (int64_t g = 0; g < blocks; ++g) {
    b.push_back(placer.block(g * T, T));
    Tp = std::max<int64_t>(Tp, static_cast<int64_t>(b.back().entries.size()));
  }
  PlacedQueries out;
  GptQueries& p = out.queries;
  p.images = q.images;
  p.per_image = q.per_image;
  p.conditions = q.conditions;
  ops::AttentionMaskBuilder mb(blocks * Tp, placer.layout().device_slots());
  for (int64_t g = 0; g < blocks; ++g) placer.emit(b[static_cast<size_t>(g)], g, Tp, p, mb);
  p.mask = mb.pack();
  // Ids: each image's image queries in order, the method's first, breaks and padding the placed id.
  std::vector<int64_t> placed_row_of(static_cast<size_t>(q.count()));  // the row a method query reads
  int64_t method_id = 0, placed_id = 0;
  for (int64_t image = 0; image < q.images; ++image) {
    const Block& blk = b[static_cast<size_t>(q.per_image ? image : 0)];
    for (size_t k = 0; k < static_cast<size_t>(Tp); ++k) {
      const bool real = k < blk.entries.size();
      const int64_t i = real ? blk.entries[k].query : -1;
      if (real && q.positions[static_cast<size_t>(i)] < cfg.cls_token_num) continue;  // a condition query
      if (real && !blk.entries[k].brk) {
        p.tokens.push_back(q.tokens.at(static_cast<size_t>(method_id)));
        add_run(out.ids, method_id++, placed_id);
      } else {
        p.tokens.push_back(static_cast<uint32_t>(cfg.placed_id()));
      }
      ++placed_id;
    }
    for (size_t k = 0; k < blk.entries.size(); ++k)
      placed_row_of[static_cast<size_t>(blk.entries[k].query)] = static_cast<int64_t>(k);  // a break: its row end's
  }
  for (int64_t row = 0; row < batch_rows; ++row) {
    const int64_t g = q.per_image ? row % q.images : 0;
    for (int64_t t = 0; t < T; ++t)
      add_run(out.rows, row * Tp + placed_row_of[static_cast<size_t>(g * T + t)], row * T + t);
  }
  return out;
}

}  // namespace vkspec
