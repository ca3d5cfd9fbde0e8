#include <gtest/gtest.h>

#include "progress.h"

TEST(PercentOf, Plain) { EXPECT_EQ(percent_of(1, 4), 25); }
TEST(PercentOf, RoundsDown) { EXPECT_EQ(percent_of(1, 3), 33); }
TEST(PercentOf, ClampsAbove) { EXPECT_EQ(percent_of(7, 5), 100); }
TEST(PercentOf, ClampsBelow) { EXPECT_EQ(percent_of(-2, 5), 0); }
TEST(PercentOf, ZeroWhole) { EXPECT_EQ(percent_of(3, 0), 0); }
TEST(ProgressBar, StillWorks) { EXPECT_EQ(progress_bar(50), "#####-----"); }
