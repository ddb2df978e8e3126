import Data.Char (toLower, toUpper)

capitalizeWords :: String -> String
capitalizeWords = unwords . map fixWord . words
  where
    fixWord [] = []
    fixWord (c:cs) = toUpper c : map toLower cs
