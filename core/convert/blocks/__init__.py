"""A learned keep/drop classifier over the blocks of the chosen container (issue 14).

``features`` turns each leaf block into language-independent numbers, ``model`` loads the
shipped weights (``model.json``, trained by ``bench/train_blocks.py`` on WCXB dev only) and
drops the blocks it scores as boilerplate. Used by ``core.convert.html_main_content``.
"""
