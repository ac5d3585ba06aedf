#pragma once
// splitmix64 for the benchmark drivers: fixed seeds give the same generated
// inputs on every machine.

#include <cstdint>

struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  bool chance(double p) { return static_cast<double>(next() % 1000000) < p * 1000000.0; }
};
