# The PyTorch profiler recipe's workload with the profiler taken out: resnet18 inference on
# random inputs, the model call inside record_function("model_inference"). profsh's resnet18_*
# recipes run it unchanged under the collector; nothing here knows about profsh.
#   python3 resnet18.py [--steps N] [--batch B] [--size S] [--threads T]
# With --steps, it runs N inferences, each inside record_function("iteration"): a long job's
# steps, for a step marker to find (scripts/resnet18_long_job.lua).
import argparse

import torch
import torchvision.models as models
from torch.profiler import record_function


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=0)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    model = models.resnet18()
    inputs = torch.randn(args.batch, 3, args.size, args.size)
    if not args.steps:
        with record_function("model_inference"):
            model(inputs)
        return
    for _ in range(args.steps):
        with record_function("iteration"):
            model(inputs)


if __name__ == "__main__":
    main()
