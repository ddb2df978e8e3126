"""Tables (pandas) and figures (seaborn), one function per paper table or figure."""
