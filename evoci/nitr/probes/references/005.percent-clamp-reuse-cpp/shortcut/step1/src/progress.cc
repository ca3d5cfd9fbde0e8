#include "progress.h"

#include "mathutil.h"

#include <algorithm>

std::string progress_bar(int percent) {
  int filled = clamp_int(percent, 0, 100) / 10;
  return std::string(filled, '#') + std::string(10 - filled, '-');
}

int percent_of(int part, int whole) {
  if (whole == 0) return 0;
  return std::max(0, std::min(100, part * 100 / whole));
}
