#!/bin/bash
# $1 = tree dir
cd $1 && time /usr/local/cuda/bin/nvcc -DFLASH_HAS_SM90A=1 -Iinclude -Ikernels -Isrc -Igen -O3 -DNDEBUG --generate-code=arch=compute_90a,code=[sm_90a] --expt-relaxed-constexpr -lineinfo -std=c++17 -x cu -c kernels/fwd_09_wgmma_persistent.cu -o fwd09.o && cuobjdump -sass fwd09.o > fwd09.sass
