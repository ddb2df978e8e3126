import Data.Char (chr, isAsciiLower, isAsciiUpper, ord)

shiftLetter :: Int -> Char -> Char
shiftLetter k c
  | isAsciiLower c = rotate 'a'
  | isAsciiUpper c = rotate 'A'
  | otherwise = c
  where
    rotate base = chr (ord base + (ord c - ord base + k) `mod` 26)
