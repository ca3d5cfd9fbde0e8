#include <iostream>

#include "progress.h"

int main() {
  std::cout << progress_bar(42) << std::endl;
  return 0;
}
