weightedScore :: Double -> Double -> Double -> Double
weightedScore exam project quiz = 0.5 * exam + 0.25 * project + 0.25 * quiz
