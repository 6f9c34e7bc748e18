// flash: exact attention (FlashAttention) kernels for NVIDIA GPUs.
#pragma once

#include "flash/backward.h"
#include "flash/decode.h"
#include "flash/error.h"
#include "flash/forward.h"
#include "flash/tensor.h"
#include "flash/variants.h"
