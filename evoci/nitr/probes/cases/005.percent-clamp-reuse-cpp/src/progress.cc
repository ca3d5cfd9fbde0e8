#include "progress.h"

#include "mathutil.h"

std::string progress_bar(int percent) {
  int filled = clamp_int(percent, 0, 100) / 10;
  return std::string(filled, '#') + std::string(10 - filled, '-');
}
