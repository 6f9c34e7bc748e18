#!/bin/bash
# $1 tree, $2 outdir suffix, rest: extra -D flags
t=$1; o=$2; shift 2
cd $t && /usr/local/cuda/bin/nvcc "$@" -DFLASH_HAS_SM90A=1 -Iinclude -Ikernels -Isrc -Igen -O3 -DNDEBUG --generate-code=arch=compute_90a,code=[sm_90a] --expt-relaxed-constexpr -lineinfo -std=c++17 -x cu -c kernels/fwd_09_wgmma_persistent.cu -o fwd09_$o.o 2> build_$o.log && cuobjdump -sass fwd09_$o.o > fwd09_$o.sass && python3 /tmp/h59/ext.py fwd09_$o.sass Fa3PersistentScheduler > k64_$o.txt && rm fwd09_$o.sass
