// Writes a folded-stack file of N unique stacks shaped like the synthetic tree measured in the
// style-and-performance anchors (B3): depth 5 to 40, frames drawn from a pool of a few thousand
// functions, consecutive stacks sharing a short random prefix (so a million stacks make roughly
// twenty million distinct tree nodes), counts from 1 to 1000, lines shuffled.
//
// Frame names all have the same length ("m042::f000123"): flamegraph.pl merges frames by
// comparing printed names, and names where one is a prefix of another reorder its sort, so equal
// lengths keep both tools' inputs identical in meaning.
//
//   gen_folded OUT.folded STACKS [SEED]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gen_folded OUT.folded STACKS [SEED]\n");
    return 2;
  }
  const long stacks = std::atol(argv[2]);
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atol(argv[3])) : 42;
  if (stacks <= 0) {
    std::fprintf(stderr, "gen_folded: STACKS must be a positive number\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  constexpr int kModules = 64;
  constexpr int kFunctions = 4000;
  std::vector<std::string> pool;
  pool.reserve(kFunctions);
  char buf[64];
  for (int f = 0; f < kFunctions; ++f) {
    std::snprintf(buf, sizeof buf, "m%03d::f%06d", static_cast<int>(rng() % kModules), f);
    pool.emplace_back(buf);
  }

  std::uniform_int_distribution<int> depth_dist(5, 40);
  std::geometric_distribution<int> shared_dist(0.2);  // mean shared prefix: 4 frames
  std::uniform_int_distribution<int> frame_dist(0, kFunctions - 1);
  std::uniform_int_distribution<int> count_dist(1, 1000);

  std::vector<int> previous, current;
  std::vector<std::string> lines;
  lines.reserve(static_cast<size_t>(stacks));
  std::unordered_set<std::string> seen;
  seen.reserve(static_cast<size_t>(stacks) * 2);
  while (static_cast<long>(lines.size()) < stacks) {
    const int depth = depth_dist(rng);
    const int shared =
        std::min<int>({shared_dist(rng), depth - 1, static_cast<int>(previous.size())});
    current.assign(previous.begin(), previous.begin() + shared);
    while (static_cast<int>(current.size()) < depth) current.push_back(frame_dist(rng));
    std::string line;
    for (size_t i = 0; i < current.size(); ++i) {
      if (i) line += ';';
      line += pool[static_cast<size_t>(current[i])];
    }
    if (!seen.insert(line).second) continue;
    line += ' ';
    line += std::to_string(count_dist(rng));
    lines.push_back(std::move(line));
    previous.swap(current);
  }
  std::shuffle(lines.begin(), lines.end(), rng);

  FILE* out = std::fopen(argv[1], "wb");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  for (const std::string& line : lines) {
    std::fwrite(line.data(), 1, line.size(), out);
    std::fputc('\n', out);
  }
  if (std::fclose(out) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  return 0;
}
