#!/usr/bin/env bash
# Session 70, call 11: how many clusters of 1, 2 and 4 CTAs of 384 threads the H200 holds at once
# (cudaOccupancyMaxActiveClusters) at 100, 160 and 225 KB of shared memory. occ.cu, built here:
#   nvcc -arch=sm_90a -o .gpu/occ/occ docs/results/2026-12-01_session70/call11/occ.cu -cudart static
# carry [".gpu/occ"].
.gpu/occ/occ 2>&1 | tee "$OUT/occ.txt"
