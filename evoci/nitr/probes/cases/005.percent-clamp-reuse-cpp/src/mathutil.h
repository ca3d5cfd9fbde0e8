#pragma once

// Limit value to the closed range [lo, hi].
int clamp_int(int value, int lo, int hi);
