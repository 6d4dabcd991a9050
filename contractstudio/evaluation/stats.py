"""The small statistics eval reports with: Wilson intervals, Cohen's kappa with its standard error, and a
sequential probability ratio test (Wald's SPRT) that decides a rate gate as soon as the rows allow.

Written out here (a few lines each) rather than taken from scipy: eval needs these formulas and nothing more.
Every interval is two-sided at 95% (z = 1.959964).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `successes / n` (0..1 for no trials: nothing is known).

    centre = (p + z²/2n) / (1 + z²/n);  half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n).
    Unlike the normal interval it stays inside 0..1 and is honest at p = 0 or 1 (9 of 10 is not "at least 90%").
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # at p = 0 (or 1) the bound is exactly 0 (or 1): rounding must not leave 1e-17 there
    return (0.0 if successes == 0 else low), (1.0 if successes == n else high)


@dataclass(frozen=True, slots=True)
class Rate:
    """A proportion with its Wilson interval: the one shape every rate eval prints has."""

    part: int
    whole: int

    @property
    def value(self) -> float:
        return self.part / self.whole if self.whole else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.part, self.whole)


def kappa(both_fail: int, false_fail: int, false_pass: int, both_pass: int) -> tuple[float, float, float, float]:
    """Cohen's kappa of two raters (a condition and the labels) over a 2x2 table, with its 95% interval:
    (kappa, standard error, low, high).

    po = (a + d)/n;  pe = ((a+b)(a+c) + (c+d)(b+d))/n²;  kappa = (po - pe)/(1 - pe);
    SE = sqrt(po(1 - po) / (n (1 - pe)²))  (Cohen 1960's large-sample error), the interval kappa ± z·SE within -1..1.
    Where pe = 1 (both raters said the same one thing every time) kappa is undefined: reported as NaN.
    """
    a, b, c, d = both_fail, false_fail, false_pass, both_pass
    n = a + b + c + d
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    if pe >= 1.0:
        return math.nan, math.nan, math.nan, math.nan
    k = (po - pe) / (1 - pe)
    se = math.sqrt(po * (1 - po) / (n * (1 - pe) ** 2))
    return k, se, max(-1.0, k - Z95 * se), min(1.0, k + Z95 * se)


@dataclass
class Sprt:
    """Wald's sequential probability ratio test of a success rate against a gate `rate`.

    H_fail: p = rate - margin, H_pass: p = rate + margin (the margin at most half-way from the rate to 0 or 1).
    Each row adds log(p1/p0) when it succeeds and log((1-p1)/(1-p0)) when it does not; the test decides
    `pass` when the sum reaches log((1-beta)/alpha) and `fail` when it falls to log(beta/(1-alpha)).
    Wald's bounds keep the chance of deciding `pass` when p <= rate - margin near alpha (at most
    alpha/(1-beta)), and of deciding `fail` when p >= rate + margin near beta (at most beta/(1-alpha)).
    Between the two (the indifference zone) either decision is acceptable.
    """

    rate: float
    margin: float = 0.05
    alpha: float = 0.05
    beta: float = 0.05
    llr: float = 0.0
    rows: int = 0
    decision: str | None = None  # None: undecided; "pass" | "fail"

    def __post_init__(self) -> None:
        if not 0 < self.rate < 1:
            raise ValueError("a sequential test decides a rate strictly between 0 and 1")
        # the zone stays inside 0..1, at most half-way to either end: a gate of 0.95 tells 0.925 from 0.975
        self.margin = min(self.margin, self.rate / 2, (1 - self.rate) / 2)
        self.p0, self.p1 = self.rate - self.margin, self.rate + self.margin
        self.upper = math.log((1 - self.beta) / self.alpha)
        self.lower = math.log(self.beta / (1 - self.alpha))
        self.step_ok = math.log(self.p1 / self.p0)
        self.step_bad = math.log((1 - self.p1) / (1 - self.p0))

    def add(self, successful: bool) -> str | None:
        """Count one row; the decision once there is one (it never changes after)."""
        if self.decision is not None:
            return self.decision
        self.rows += 1
        self.llr += self.step_ok if successful else self.step_bad
        if self.llr >= self.upper:
            self.decision = "pass"
        elif self.llr <= self.lower:
            self.decision = "fail"
        return self.decision
