// What happens to the raw scores S = Q K^T between the product and the
// softmax, in one place for every kernel. Today only the softmax scale, which
// the kernels fold into the softmax's exp2 (one FFMA per element): the scores
// stay raw, exp2_scale() is what exp2 multiplies them by, and lse_scale()
// turns a raw row max into natural-log units for the LSE. A softcap or a
// bias becomes an edit here: apply() transforms the scores (before the mask,
// which writes -inf) and the two scales follow.
#pragma once

#include "common/constants.h"
#include "common/params.h"

namespace flash::detail {

// A view of the params: kernels construct it where they use it, so its
// values stay operands in the kernel's constant bank instead of registers
// that live across the key loop.
struct ScoreMod {
  const AttnProblem& p;

  FLASH_HOST_DEVICE explicit ScoreMod(const AttnProblem& params) : p(params) {}

  FLASH_HOST_DEVICE float exp2_scale() const { return p.scale_log2; }  // softmax scale * log2(e)
  FLASH_HOST_DEVICE float lse_scale() const { return p.scale; }        // softmax scale

  // One raw score of row `row` and key `key`, for kernels that handle scores
  // one at a time (fwd_01_naive).
  FLASH_HOST_DEVICE float score(float raw, int /*row*/, int /*key*/) const { return raw; }

  // The scores of an m16n8 accumulator fragment (rows as in Mask::apply);
  // nothing to do while the scale is folded into exp2.
  template <int kMTiles, int kNTiles>
  FLASH_HOST_DEVICE void apply(float (&)[kMTiles][kNTiles][4], int /*row0*/, int /*n0*/, int /*lane*/) const {}
};

}  // namespace flash::detail
