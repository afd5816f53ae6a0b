"""`mindgraph calibrate`: recency that calibrates itself from how the wiki is used.

The reference deployment re-tunes its decay λ weekly from hit rates. This package reads the
usage log (which answers were followed up by reading a page, which queries were asked again)
and, when given, benchmark questions; re-ranks each query's candidates under a grid of λ;
and proposes the λ, and the evergreen pages, that would have ranked the used pages highest.
Nothing is written unless asked.
"""
