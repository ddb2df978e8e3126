lemma Fact(x: int)
  ensures x * x >= 0
