"""Decoding you can step through: greedy, beam search and sampling on one step loop
(`loop.py`), for any model that offers a Stepper (`stepper.py`); what a run is asked to do is
defined once, in `request.py`."""
