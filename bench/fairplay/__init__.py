"""The fair-play bench: honest play and the attacks of issue 21, measured through the API
(``python -m bench.fairplay``)."""
