import Data.List (sortBy)

sortByFlag :: Bool -> [Int] -> [Int]
sortByFlag ascending = sortBy order
  where
    order = if ascending then compare else flip compare
