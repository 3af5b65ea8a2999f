"""Closed-network answers independent of MVA, for checking the recursions."""

import math

import numpy as np


def exact_closed_resp_ms(n, demands, servers, delay_ms):
    """Response outside the delay from the normalisation constants, in logs (Buzen's convolution).

    Independent of MVA: G(n) of a product-form network of load-dependent stations with rates
    min(j, m) and one delay station, computed by direct convolution; X(n) = G(n-1) / G(n).
    """
    from scipy.special import gammaln, logsumexp

    k = np.arange(n + 1)
    log_g = (k * math.log(delay_ms) - gammaln(k + 1))  # the delay station alone
    for d, m in zip(demands, servers, strict=True):
        log_beta = np.where(k <= m, gammaln(k + 1), gammaln(m + 1) + (k - m) * math.log(m))
        log_f = k * math.log(d) - log_beta
        log_g = np.array([logsumexp(log_g[: j + 1][::-1] + log_f[: j + 1]) for j in range(n + 1)])
    x = math.exp(log_g[n - 1] - log_g[n])
    return n / x - delay_ms
