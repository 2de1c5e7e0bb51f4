"""Anytime-valid alternatives to the group-sequential looks, for the calibration bench.

Both test each kernel's mean of D_i one-sided at alpha = 0.05, with D_i in [-1/2, 1] at
r = 2 mapped to X = (D_i + 1/2) / (3/2) in [0, 1], questions taken one at a time in cohort
order, and are read only at the planned looks (valid at any stopping time, so also there):

- **empirical Bernstein** (Waudby-Smith & Ramdas 2024, JRSS-B, "Estimating means of bounded
  random variables by betting", Theorem 2, the predictable plug-in PrPl-EB confidence
  sequence, one-sided: log(1/alpha) in place of log(2/alpha)): with
  mu_t = (1/2 + sum X) / (t + 1), s2_t = (1/4 + sum (X_i - mu_i)^2) / (t + 1),
  lambda_i = min(sqrt(2 log(1/alpha) / (s2_{i-1} i log(1 + i))), 1/2),
  v_i = 4 (X_i - mu_{i-1})^2 and psi(l) = (-log(1 - l) - l) / 4, the lower bound is
  (sum lambda_i X_i - log(1/alpha) - sum v_i psi(lambda_i)) / sum lambda_i;
- **betting** (the same paper, section 4: a test by betting, the capital process at the null
  value m: K_t = prod (1 + lambda_i (X_i - m)), a nonnegative supermartingale under mean <= m,
  so P(some K_t >= 1/alpha) <= alpha by Ville's inequality), lambda_i by aGRAPA
  (their eq. (26): (mu_{i-1} - m) / (s2_{i-1} + (mu_{i-1} - m)^2), clipped to [0, 1/(2m)]).
"""

from __future__ import annotations

import math

import numpy as np

ALPHA = 0.05
LOW, SPAN = -0.5, 1.5  # D_i of r = 2 lies in [-1/2, 1]


def to_unit(d: np.ndarray) -> np.ndarray:
    return (d - LOW) / SPAN


def _running(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The predictable mean and variance estimates mu_{i-1}, s2_{i-1} along axis 1."""
    n = x.shape[1]
    t = np.arange(1, n + 1).reshape((1, n) + (1,) * (x.ndim - 2))
    mu = (0.5 + np.cumsum(x, axis=1)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=1)) / (t + 1)
    first_mu = np.full_like(x[:, :1], 0.5)
    first_s2 = np.full_like(x[:, :1], 0.25)
    return (np.concatenate([first_mu, mu[:, :-1]], axis=1),
            np.concatenate([first_s2, s2[:, :-1]], axis=1))


def eb_lower(x: np.ndarray) -> np.ndarray:
    """The PrPl-EB one-sided lower confidence sequence of the mean of ``x`` (audits, n, ...)
    in [0, 1] after each observation."""
    n = x.shape[1]
    mu_prev, s2_prev = _running(x)
    i = np.arange(1, n + 1).reshape((1, n) + (1,) * (x.ndim - 2))
    log_a = math.log(1 / ALPHA)
    lam = np.minimum(np.sqrt(2 * log_a / (s2_prev * i * np.log1p(i))), 0.5)
    v = 4 * (x - mu_prev) ** 2
    psi = (-np.log1p(-lam) - lam) / 4
    num = np.cumsum(lam * x, axis=1) - log_a - np.cumsum(v * psi, axis=1)
    out: np.ndarray = num / np.cumsum(lam, axis=1)
    return out


def betting_log_capital(x: np.ndarray, m: float) -> np.ndarray:
    """log K_t of the aGRAPA bet against "mean <= m" for ``x`` (audits, n, ...) in [0, 1]."""
    mu_prev, s2_prev = _running(x)
    gap = mu_prev - m
    lam = np.clip(gap / (s2_prev + gap * gap), 0.0, 0.5 / m)
    out: np.ndarray = np.cumsum(np.log1p(lam * (x - m)), axis=1)
    return out


def lower_and_upper_d(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical-Bernstein lower and upper bounds of mean D (fractions), per question."""
    x = to_unit(d)
    return LOW + SPAN * eb_lower(x), LOW + SPAN * (1.0 - eb_lower(1.0 - x))


def betting_rejects(d: np.ndarray, null_d: float, above: bool) -> np.ndarray:
    """Whether the bet has reached 1/alpha, per question: against "mean D <= null_d"
    (``above``: evidence that D > null_d) or against "mean D >= null_d"."""
    x, m = to_unit(d), (null_d - LOW) / SPAN
    if not above:
        x, m = 1.0 - x, 1.0 - m
    return betting_log_capital(x, m) >= math.log(1 / ALPHA)
