"""Warnings and errors of dpsparse."""
import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel():
    """The ``stacklevel`` that attributes a warning raised by the caller of this function to the first frame outside
    dpsparse (the user's line, or the scikit-learn tool that called ``fit``)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


class InputError(ValueError):
    """A refused input whose remedy names options: ``str(error)`` in Python's terms (``bounds_share``),
    ``error.cli`` in the command line's (``--bounds-share``), which ``dpsparse`` prints instead."""

    def __init__(self, message, cli=None):
        super().__init__(message)
        self.cli = message if cli is None else cli


class PrivacyLeakWarning(UserWarning):
    """A constant that sets a noise scale was computed from the private data.

    The differential-privacy guarantee does not hold for a fit that raised this
    warning; its privacy report says so.
    """


class PrivacyCalibrationWarning(UserWarning):
    """A calibration formula of a source paper does not meet the target (epsilon, delta)."""


class FixedSeedWarning(UserWarning):
    """The privacy noise was drawn with a fixed seed: reproducible, for experiments only."""


class WeakGuaranteeWarning(UserWarning):
    """The guarantee holds but is weak: e.g. a delta above 1/n, at which a mechanism may reveal a whole record."""


class ClippingWarning(UserWarning):
    """Many feature values or labels lay outside the declared bounds and were clipped: the bounds may not
    match the data's units. Counted on the private data, for the data holder only (never released)."""


class AbsentClassWarning(UserWarning):
    """A declared class holds no record of the training labels: the model cannot learn it (one class against
    nothing). Counted on the private data, for the data holder only (never released)."""


class UnselectedLabelWarning(UserWarning):
    """Training labels lie outside the label set selected privately (``classes="private"``): a rare label did not
    pass the selection's threshold, and its records count as the first class of two (as none of three or more).
    Counted on the private data, for the data holder only (never released)."""


class ClassesFromDataWarning(PrivacyLeakWarning):
    """The label set (``classes_``) was read from the private data instead of declared; it is released with the
    model as read and sets the number of one-vs-rest fits (each one's share of the budget), so the fit has no
    differential-privacy guarantee."""


class ConstantPredictorWarning(UserWarning):
    """``mechanism="auto"`` released the constant predictor (a noisy label mean or majority class): the records are
    too few for this epsilon to learn a feature (a public rule on n, p and epsilon; docs/defaults.md)."""


class NoBetterThanConstantWarning(UserWarning):
    """A model's private score does not beat the constant predictor's by more than twice the noise of their
    difference: at this epsilon and number of records, predicting the majority class or the mean is as good."""
