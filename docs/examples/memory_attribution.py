# Memory charged by time (torch.profiler) or to the allocating op (profsh): a matmul's output
# allocated in the same microsecond a cheap op starts or ends.
import sys
import torch
from torch.profiler import profile, ProfilerActivity

x = torch.randn(512, 512)
def step():
    for _ in range(20):
        y = torch.mm(x, x)
        z = y.t().contiguous()
        w = torch.view_as_real(torch.view_as_complex(torch.stack([z, z], -1))).resolve_conj()
if len(sys.argv) > 1 and sys.argv[1] == "torch":
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as p:
        step()
    print(p.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=8))
else:
    step()
