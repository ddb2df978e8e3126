-- reflectable
exactlyOne :: Bool -> Bool -> Bool -> Bool
exactlyOne a b c =
  if a
    then not b && not c
    else if b then not c else c
