"""Softmax regression on generated data whose samples have lengths.

The real model of the SGD experiment (:mod:`straggle_edu.instruments.sgd`):
a linear classifier ``logits = [x, 1] @ W`` trained with float64 cross-entropy
gradients. The data is generated from a seed (no downloads):

- ``features`` Gaussian features per sample, ``classes`` classes, each class
  a Gaussian cloud around its own centre;
- every sample has a **length** (think tokens): short samples are about 1,
  long samples ``long_factor`` times longer;
- the long samples are a subgroup with labels of their own: the last
  ``long_classes`` classes occur only among long samples, so a model that
  never sees a long sample's gradient never learns them, and
  ``accuracy_long`` shows it.

The loss is the mean cross-entropy; :func:`gradient_sum` returns the *sum*
over a batch, so gradients of batches of any sizes add up exactly and the
caller divides by the number of samples it counted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .._validate import as_rng, check_memory, in_range, require, whole

__all__ = ["LengthData", "make_length_data", "gradient_sum", "loss", "accuracy", "init_weights", "weights_sha256"]


@dataclass(frozen=True, eq=False)
class LengthData:
    """A train/test split of generated samples with lengths.

    Attributes
    ----------
    X, y, length, long : numpy.ndarray
        Training features (n, features + 1; the last column is the bias 1),
        labels (n,), lengths (n,; mean 1 over short samples) and the long flag (n,).
    X_test, y_test, long_test : numpy.ndarray
        The held-out test set.
    classes : int
    """

    X: np.ndarray
    y: np.ndarray
    length: np.ndarray
    long: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    long_test: np.ndarray
    classes: int

    @property
    def mean_length(self):
        """The mean length of a training sample."""
        return float(self.length.mean())

    @property
    def shape(self):
        """The weight matrix's shape: (features + 1, classes)."""
        return (self.X.shape[1], self.classes)


def make_length_data(seed=0, *, n_train=4096, n_test=2048, features=8, classes=5, long_classes=2,
                     long_share=0.2, long_factor=4.0, separation=1.6):
    """Generate the seeded data set.

    Parameters
    ----------
    seed : int
        Seed of the data (features, labels, lengths).
    n_train, n_test : int
        Training and test samples.
    features, classes, long_classes : int
        Feature count, class count, and how many of the classes (the last
        ones) belong to the long samples only.
    long_share : float
        Fraction of long samples, in (0, 1).
    long_factor : float
        How many times longer a long sample is, >= 1.
    separation : float
        Distance scale of the class centres (larger is easier).

    Examples
    --------
    >>> d = make_length_data(0, n_train=1000)
    >>> d.X.shape, d.shape, round(float(d.long.mean()), 2)
    ((1000, 9), (9, 5), 0.2)
    >>> sorted(set(d.y[d.long].tolist())), sorted(set(d.y[~d.long].tolist()))
    ([3, 4], [0, 1, 2])
    """
    n_train = whole("n_train", n_train, 16, 10**6)
    n_test = whole("n_test", n_test, 16, 10**6)
    features = whole("features", features, 1, 1024)
    classes = whole("classes", classes, 2, 100)
    long_classes = whole("long_classes", long_classes, 1, classes - 1)
    long_share = in_range("long_share", long_share, 0.0, 1.0, low_open=True, high_open=True)
    long_factor = in_range("long_factor", long_factor, 1.0, 100.0)
    check_memory((n_train + n_test) * (features + 4) * 8, f"{n_train + n_test} samples of {features} features")
    rng = as_rng(seed)
    centres = rng.normal(0.0, separation, size=(classes, features))
    parts = [_draw(rng, n, centres, classes, long_classes, long_share, long_factor) for n in (n_train, n_test)]
    (X, y, length, long), (Xt, yt, _, lt) = parts
    return LengthData(X, y, length, long, Xt, yt, lt, classes)


def _draw(rng, n, centres, classes, long_classes, long_share, long_factor):
    """n samples: exactly round(long_share * n) long ones, in random order."""
    n_long = int(round(long_share * n))
    long = np.zeros(n, dtype=bool)
    long[:n_long] = True
    rng.shuffle(long)
    short_classes = classes - long_classes
    y = np.where(long, short_classes + rng.integers(0, long_classes, n), rng.integers(0, short_classes, n))
    X = centres[y] + rng.normal(0.0, 1.0, size=(n, centres.shape[1]))
    X = np.hstack([X, np.ones((n, 1))])
    length = rng.uniform(0.75, 1.25, n) * np.where(long, long_factor, 1.0)
    return X, y, length, long


def init_weights(data, seed=0):
    """Initial weights: small seeded Gaussian values, shape ``data.shape``.

    Examples
    --------
    >>> init_weights(make_length_data(0, n_train=64)).shape
    (9, 5)
    """
    return as_rng(seed).normal(0.0, 0.01, size=data.shape)


def _probs(W, X):
    z = X @ W
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def gradient_sum(W, X, y):
    """The cross-entropy gradient summed over a batch (not averaged).

    Examples
    --------
    >>> d = make_length_data(0, n_train=64)
    >>> W = init_weights(d)
    >>> g = gradient_sum(W, d.X[:8], d.y[:8])
    >>> g.shape, bool(np.allclose(g, gradient_sum(W, d.X[:3], d.y[:3]) + gradient_sum(W, d.X[3:8], d.y[3:8])))
    ((9, 5), True)
    """
    P = _probs(W, X)
    P[np.arange(len(y)), y] -= 1.0
    return X.T @ P


def loss(W, X, y):
    """Mean cross-entropy (nats) of weights W on (X, y).

    Examples
    --------
    >>> d = make_length_data(0, n_train=64)
    >>> round(loss(np.zeros(d.shape), d.X_test, d.y_test), 4)  # log(5)
    1.6094
    """
    P = _probs(W, X)
    return float(-np.log(np.maximum(P[np.arange(len(y)), y], 1e-300)).mean())


def accuracy(W, X, y):
    """Fraction of samples whose largest logit is the label (nan for no samples).

    Examples
    --------
    >>> d = make_length_data(0, n_train=64)
    >>> accuracy(np.zeros(d.shape), d.X_test, np.zeros(len(d.y_test), dtype=int))
    1.0
    """
    if len(y) == 0:
        return float("nan")
    return float(((X @ W).argmax(axis=1) == y).mean())


def weights_sha256(W):
    """SHA-256 of the weights as little-endian float64 bytes, in parameter (C) order.

    Examples
    --------
    >>> weights_sha256(np.zeros((2, 2))) == hashlib.sha256(bytes(32)).hexdigest()  # 4 zeros, 8 bytes each
    True
    """
    require(np.isfinite(W).all(), "weights", W, "finite numbers")
    return hashlib.sha256(np.ascontiguousarray(W, dtype="<f8").tobytes()).hexdigest()
