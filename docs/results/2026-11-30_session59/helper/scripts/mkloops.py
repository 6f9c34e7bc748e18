from load import *
import sys
H=sys.argv[1]
T=4194048
def dump(name,ranges,out,title):
    h,r=load(name)
    tot=sum(x['samp'] for x in r)
    with open(out,'w') as f:
        f.write(title+"\n")
        f.write(f"# columns: SASS index | Instructions Executed (warp-level) | per key tile per warp (exec/{T}) | stall samples (all) | % of kernel samples | top-3 stall reasons (samples) | SASS\n")
        f.write(f"# kernel total stall samples {tot:.0f}; per-tile count {T} = 32 heads x 86 query blocks x 12 consumer warps x 128 key tiles, minus the peeled first tile\n")
        for lab,(a,b) in ranges:
            f.write(f"\n## {lab} (rows {a}..{b})\n")
            for x in r[a:b+1]:
                f.write(f"{x['i']:5d} {int(x['exec']):9d} {x['exec']/T:5.2f} {int(x['samp']):6d} {100*x['samp']/tot:5.2f}% {top(x['stalls'],3):48s} | {x['src']}\n")
dump('fl_f64',[('copy 1 of 4 (stage 1; K wait [+0x28], V wait [+0x18])',(912,1577)),('copy 2 of 4',(1578,2241)),('copy 3 of 4',(2242,2905)),('copy 4 of 4 + back edge',(2906,3561))],
     H+'/flash_loop.txt','# flash fwd_09_wgmma_persistent_kernel<bf16, WgmmaPersistentConfig<64>> steady K/V loop (kernels/common/fa3_forward.cuh Consumer::run, the kIntraWGOverlap loop unrolled by kStages=4). Rows with exec 0 are the masked / rescale paths, not taken in this call (non-causal, 16k).')
dump('fa4_f64',[('FA4 steady loop (not unrolled; back edge @P0 BRA at 1125)',(708,1125))],
     H+'/fa4_loop.txt','# FA4 sm90 forward (CuTe DSL FlashAttentionForwardSm90), hdim 64, steady K/V loop.')
