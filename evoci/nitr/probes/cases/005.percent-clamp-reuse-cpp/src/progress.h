#pragma once

#include <string>

// A 10-character bar for a percentage: "#####-----" for 50.
std::string progress_bar(int percent);
