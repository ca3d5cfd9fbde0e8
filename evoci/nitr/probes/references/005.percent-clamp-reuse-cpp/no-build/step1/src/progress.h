#pragma once

#include <string>

// A 10-character bar for a percentage: "#####-----" for 50.
std::string progress_bar(int percent);

// part * 100 / whole, limited to [0, 100]; 0 when whole is 0.
int percent_of(int part, int whole);
