method Touch(a: array<int>)
  modifies a
  ensures a.Length == old(a.Length)
