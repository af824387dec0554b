//! The distributions of numpy's legacy `RandomState` beyond uniform, normal
//! and bounded integers, each drawing from the engine in numpy's order with
//! numpy's arithmetic (its `mtrand` legacy algorithms: the polar normal, the
//! `-log(1 - U)` exponential, Marsaglia–Tsang gamma, Johnk's beta, PTRS and
//! multiplication Poisson), so a seed gives numpy's samples.

use crate::legacy::RandomState;

/// A distribution and its parameters, for one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    StandardExponential,
    Gumbel { loc: f64, scale: f64 },
    Laplace { loc: f64, scale: f64 },
    Logistic { loc: f64, scale: f64 },
    Lognormal { mean: f64, sigma: f64 },
    Rayleigh { scale: f64 },
    StandardCauchy,
    Pareto { a: f64 },
    Weibull { a: f64 },
    Power { a: f64 },
    Triangular { left: f64, mode: f64, right: f64 },
    Wald { mean: f64, scale: f64 },
    StandardGamma { shape: f64 },
    Gamma { shape: f64, scale: f64 },
    Chisquare { df: f64 },
    NoncentralChisquare { df: f64, nonc: f64 },
    F { dfnum: f64, dfden: f64 },
    NoncentralF { dfnum: f64, dfden: f64, nonc: f64 },
    StandardT { df: f64 },
    Beta { a: f64, b: f64 },
    Poisson { lam: f64 },
    NegativeBinomial { n: f64, p: f64 },
    Geometric { p: f64 },
    Logseries { p: f64 },
    Binomial { n: f64, p: f64 },
    Zipf { a: f64 },
}

impl Dist {
    /// The distribution numpy's `RandomState` method `name` samples, with
    /// its parameters in the method's order.
    pub fn parse(name: &str, params: &[f64]) -> Result<Dist, String> {
        let arity = |n: usize| -> Result<(), String> {
            if params.len() == n {
                Ok(())
            } else {
                Err(format!("{name} takes {n} parameters, got {}", params.len()))
            }
        };
        let p = |i: usize| params[i];
        Ok(match name {
            "standard_exponential" | "standard_cauchy" => {
                arity(0)?;
                if name == "standard_cauchy" {
                    Dist::StandardCauchy
                } else {
                    Dist::StandardExponential
                }
            }
            "rayleigh" | "pareto" | "weibull" | "power" | "standard_gamma" | "chisquare"
            | "standard_t" | "poisson" | "geometric" | "logseries" | "zipf" => {
                arity(1)?;
                let a = p(0);
                match name {
                    "rayleigh" => Dist::Rayleigh { scale: a },
                    "pareto" => Dist::Pareto { a },
                    "weibull" => Dist::Weibull { a },
                    "power" => Dist::Power { a },
                    "standard_gamma" => Dist::StandardGamma { shape: a },
                    "chisquare" => Dist::Chisquare { df: a },
                    "standard_t" => Dist::StandardT { df: a },
                    "poisson" => Dist::Poisson { lam: a },
                    "geometric" => Dist::Geometric { p: a },
                    "logseries" => Dist::Logseries { p: a },
                    _ => Dist::Zipf { a },
                }
            }
            "triangular" | "noncentral_f" => {
                arity(3)?;
                if name == "triangular" {
                    Dist::Triangular {
                        left: p(0),
                        mode: p(1),
                        right: p(2),
                    }
                } else {
                    Dist::NoncentralF {
                        dfnum: p(0),
                        dfden: p(1),
                        nonc: p(2),
                    }
                }
            }
            _ => {
                arity(2)?;
                let (a, b) = (p(0), p(1));
                match name {
                    "gumbel" => Dist::Gumbel { loc: a, scale: b },
                    "laplace" => Dist::Laplace { loc: a, scale: b },
                    "logistic" => Dist::Logistic { loc: a, scale: b },
                    "lognormal" => Dist::Lognormal { mean: a, sigma: b },
                    "wald" => Dist::Wald { mean: a, scale: b },
                    "gamma" => Dist::Gamma { shape: a, scale: b },
                    "noncentral_chisquare" => Dist::NoncentralChisquare { df: a, nonc: b },
                    "f" => Dist::F { dfnum: a, dfden: b },
                    "beta" => Dist::Beta { a, b },
                    "negative_binomial" => Dist::NegativeBinomial { n: a, p: b },
                    "binomial" => Dist::Binomial { n: a, p: b },
                    _ => return Err(format!("no distribution {name}")),
                }
            }
        })
    }
}

impl RandomState {
    /// `-log(1 - U)`: the legacy exponential (not the ziggurat one).
    pub fn standard_exponential(&mut self) -> f64 {
        -(1.0 - self.next_double()).ln()
    }

    fn standard_gamma(&mut self, shape: f64) -> f64 {
        if shape == 1.0 {
            return self.standard_exponential();
        }
        if shape == 0.0 {
            return 0.0;
        }
        if shape < 1.0 {
            loop {
                let u = self.next_double();
                let v = self.standard_exponential();
                if u <= 1.0 - shape {
                    let x = u.powf(1.0 / shape);
                    if x <= v {
                        return x;
                    }
                } else {
                    let y = -((1.0 - u) / shape).ln();
                    let x = (1.0 - shape + shape * y).powf(1.0 / shape);
                    if x <= v + y {
                        return x;
                    }
                }
            }
        }
        let b = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * b).sqrt();
        loop {
            let (x, mut v) = loop {
                let x = self.gauss();
                let v = 1.0 + c * x;
                if v > 0.0 {
                    break (x, v);
                }
            };
            v = v * v * v;
            let u = self.next_double();
            if u < 1.0 - 0.0331 * (x * x) * (x * x) {
                return b * v;
            }
            if u.ln() < 0.5 * x * x + b * (1.0 - v + v.ln()) {
                return b * v;
            }
        }
    }

    fn chisquare(&mut self, df: f64) -> f64 {
        2.0 * self.standard_gamma(df / 2.0)
    }

    fn noncentral_chisquare(&mut self, df: f64, nonc: f64) -> f64 {
        if nonc == 0.0 {
            return self.chisquare(df);
        }
        if 1.0 < df {
            let chi2 = self.chisquare(df - 1.0);
            let n = self.gauss() + nonc.sqrt();
            return chi2 + n * n;
        }
        let i = self.poisson(nonc / 2.0);
        let out = self.chisquare(df + 2.0 * i as f64);
        if nonc.is_nan() { f64::NAN } else { out }
    }

    fn beta(&mut self, a: f64, b: f64) -> f64 {
        if a <= 1.0 && b <= 1.0 {
            // Johnk's algorithm.
            loop {
                let u = self.next_double();
                let v = self.next_double();
                let x = u.powf(1.0 / a);
                let y = v.powf(1.0 / b);
                if x + y <= 1.0 {
                    if x + y > 0.0 {
                        return x / (x + y);
                    }
                    let (mut log_x, mut log_y) = (u.ln() / a, v.ln() / b);
                    let log_m = log_x.max(log_y);
                    log_x -= log_m;
                    log_y -= log_m;
                    return (log_x - (log_x.exp() + log_y.exp()).ln()).exp();
                }
            }
        }
        let ga = self.standard_gamma(a);
        let gb = self.standard_gamma(b);
        ga / (ga + gb)
    }

    /// Poisson samples: multiplication below 10, PTRS (Hörmann) above.
    pub fn poisson(&mut self, lam: f64) -> i64 {
        if lam >= 10.0 {
            return self.poisson_ptrs(lam);
        }
        if lam == 0.0 {
            return 0;
        }
        let enlam = (-lam).exp();
        let (mut x, mut prod) = (0, 1.0);
        loop {
            prod *= self.next_double();
            if prod > enlam {
                x += 1;
            } else {
                return x;
            }
        }
    }

    fn poisson_ptrs(&mut self, lam: f64) -> i64 {
        let slam = lam.sqrt();
        let loglam = lam.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.next_double() - 0.5;
            let v = self.next_double();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lam + 0.43).floor() as i64;
            if us >= 0.07 && v <= vr {
                return k;
            }
            if k < 0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
                <= -lam + k as f64 * loglam - loggam(k as f64 + 1.0)
            {
                return k;
            }
        }
    }

    fn geometric(&mut self, p: f64) -> i64 {
        if p >= 0.333_333_333_333_333_3 {
            // Search.
            let (mut x, mut sum, mut prod) = (1, p, p);
            let q = 1.0 - p;
            let u = self.next_double();
            while u > sum {
                prod *= q;
                sum += prod;
                x += 1;
            }
            return x;
        }
        ((1.0 - self.next_double()).ln() / (1.0 - p).ln()).ceil() as i64
    }

    fn logseries(&mut self, p: f64) -> i64 {
        let r = (1.0 - p).ln();
        loop {
            let v = self.next_double();
            if v >= p {
                return 1;
            }
            let u = self.next_double();
            let q = 1.0 - (r * u).exp();
            if v <= q * q {
                let result = (1.0 + v.ln() / q.ln()).floor() as i64;
                if result < 1 {
                    continue;
                }
                return result;
            }
            return if v >= q { 1 } else { 2 };
        }
    }

    /// A binomial sample: inversion while the mean is small, BTPE
    /// (Kachitvichyanukul and Schmeiser) above, on the smaller of p and 1 - p.
    /// `RandomState.binomial` draws even for `n == 0` or `p == 0`
    /// (`legacy`); `multinomial`'s draws skip those.
    pub fn binomial(&mut self, n: i64, p: f64, legacy: bool) -> i64 {
        if !legacy && (n == 0 || p == 0.0) {
            return 0;
        }
        if p <= 0.5 {
            if p * n as f64 <= 30.0 {
                self.binomial_inversion(n, p)
            } else {
                self.binomial_btpe(n, p)
            }
        } else {
            let q = 1.0 - p;
            if q * n as f64 <= 30.0 {
                n - self.binomial_inversion(n, q)
            } else {
                n - self.binomial_btpe(n, q)
            }
        }
    }

    fn binomial_inversion(&mut self, n: i64, p: f64) -> i64 {
        let q = 1.0 - p;
        let qn = (n as f64 * q.ln()).exp();
        let np = n as f64 * p;
        let bound = (n as f64).min(np + 10.0 * (np * q + 1.0).sqrt()) as i64;
        let mut x = 0;
        let mut px = qn;
        let mut u = self.next_double();
        while u > px {
            x += 1;
            if x > bound {
                x = 0;
                px = qn;
                u = self.next_double();
            } else {
                u -= px;
                px = ((n - x + 1) as f64 * p * px) / (x as f64 * q);
            }
        }
        x
    }

    fn binomial_btpe(&mut self, n: i64, p: f64) -> i64 {
        let nf = n as f64;
        let r = p.min(1.0 - p);
        let q = 1.0 - r;
        let fm = nf * r + r;
        let m = fm.floor() as i64;
        let mf = m as f64;
        let p1 = (2.195 * (nf * r * q).sqrt() - 4.6 * q).floor() + 0.5;
        let xm = mf + 0.5;
        let xl = xm - p1;
        let xr = xm + p1;
        let c = 0.134 + 20.5 / (15.3 + mf);
        let a = (fm - xl) / (fm - xl * r);
        let laml = a * (1.0 + a / 2.0);
        let a = (xr - fm) / (xr * q);
        let lamr = a * (1.0 + a / 2.0);
        let p2 = p1 * (1.0 + 2.0 * c);
        let p3 = p2 + c / laml;
        let p4 = p3 + c / lamr;
        let nrq = nf * r * q;
        loop {
            let u = self.next_double() * p4;
            let mut v = self.next_double();
            let y: i64;
            if u <= p1 {
                // The triangular centre: accepted at once.
                y = (xm - p1 * v + u).floor() as i64;
                return if p > 0.5 { n - y } else { y };
            } else if u <= p2 {
                let x = xl + (u - p1) / c;
                v = v * c + 1.0 - (mf - x + 0.5).abs() / p1;
                if v > 1.0 {
                    continue;
                }
                y = x.floor() as i64;
            } else if u <= p3 {
                let yy = (xl + v.ln() / laml).floor();
                if yy < 0.0 || v == 0.0 {
                    continue;
                }
                y = yy as i64;
                v *= (u - p2) * laml;
            } else {
                let yy = (xr - v.ln() / lamr).floor();
                if yy > nf || v == 0.0 {
                    continue;
                }
                y = yy as i64;
                v *= (u - p3) * lamr;
            }
            let k = (y - m).abs();
            let kf = k as f64;
            if !(k > 20 && kf < nrq / 2.0 - 1.0) {
                // Explicit evaluation of the density ratio.
                let s = r / q;
                let a = s * (nf + 1.0);
                let mut f = 1.0;
                if m < y {
                    for i in m + 1..=y {
                        f *= a / i as f64 - s;
                    }
                } else if m > y {
                    for i in y + 1..=m {
                        f /= a / i as f64 - s;
                    }
                }
                if v > f {
                    continue;
                }
                return if p > 0.5 { n - y } else { y };
            }
            // Squeezing, then Stirling's approximation of the bound.
            let rho = (kf / nrq) * ((kf * (kf / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
            let t = -kf * kf / (2.0 * nrq);
            let big_a = v.ln();
            if big_a < t - rho {
                return if p > 0.5 { n - y } else { y };
            }
            if big_a > t + rho {
                continue;
            }
            let yf = y as f64;
            let x1 = yf + 1.0;
            let f1 = mf + 1.0;
            let z = nf + 1.0 - mf;
            let w = nf - yf + 1.0;
            let (x2, f2, z2, w2) = (x1 * x1, f1 * f1, z * z, w * w);
            let stirling = |v: f64, v2: f64| {
                (13680. - (462. - (132. - (99. - 140. / v2) / v2) / v2) / v2) / v / 166320.
            };
            let bound = xm * (f1 / x1).ln()
                + (nf - mf + 0.5) * (z / w).ln()
                + (yf - mf) * (w * r / (x1 * q)).ln()
                + stirling(f1, f2)
                + stirling(x1, x2)
                + stirling(z, z2)
                + stirling(w, w2);
            if big_a > bound {
                continue;
            }
            return if p > 0.5 { n - y } else { y };
        }
    }

    /// Zipf samples by rejection, truncated to int64's range.
    fn zipf(&mut self, a: f64) -> i64 {
        let am1 = a - 1.0;
        let b = 2f64.powf(am1);
        loop {
            let u = 1.0 - self.next_double();
            let v = self.next_double();
            let x = u.powf(-1.0 / am1).floor();
            if x > i64::MAX as f64 || x < 1.0 {
                continue;
            }
            let t = (1.0 + 1.0 / x).powf(am1);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b {
                return x as i64;
            }
        }
    }

    /// One multinomial sample of `n` trials over `pvals` (their last entry
    /// takes what the others leave).
    pub fn multinomial(&mut self, n: i64, pvals: &[f64]) -> Vec<i64> {
        let mut out = vec![0; pvals.len()];
        let (mut left, mut remaining) = (n, 1.0);
        for (j, &p) in pvals.iter().enumerate().take(pvals.len().saturating_sub(1)) {
            out[j] = self.binomial(left, (p / remaining).clamp(0.0, 1.0), false);
            left -= out[j];
            if left <= 0 {
                break;
            }
            remaining -= p;
        }
        if left > 0
            && let Some(last) = out.last_mut()
        {
            *last = left;
        }
        out
    }

    /// One sample of `dist`, as a float (integer distributions give whole numbers).
    pub fn sample(&mut self, dist: Dist) -> f64 {
        match dist {
            Dist::StandardExponential => self.standard_exponential(),
            Dist::Gumbel { loc, scale } => loop {
                let u = 1.0 - self.next_double();
                if u < 1.0 {
                    break loc - scale * (-u.ln()).ln();
                }
            },
            Dist::Laplace { loc, scale } => loop {
                let u = self.next_double();
                if u >= 0.5 {
                    break loc - scale * (2.0 - u - u).ln();
                }
                if u > 0.0 {
                    break loc + scale * (u + u).ln();
                }
            },
            Dist::Logistic { loc, scale } => loop {
                let u = self.next_double();
                if u > 0.0 {
                    break loc + scale * (u / (1.0 - u)).ln();
                }
            },
            Dist::Lognormal { mean, sigma } => (mean + sigma * self.gauss()).exp(),
            Dist::Rayleigh { scale } => scale * (-2.0 * (1.0 - self.next_double()).ln()).sqrt(),
            Dist::StandardCauchy => self.gauss() / self.gauss(),
            Dist::Pareto { a } => (self.standard_exponential() / a).exp() - 1.0,
            Dist::Weibull { a } => {
                if a == 0.0 {
                    0.0
                } else {
                    self.standard_exponential().powf(1.0 / a)
                }
            }
            Dist::Power { a } => (1.0 - (-self.standard_exponential()).exp()).powf(1.0 / a),
            Dist::Triangular { left, mode, right } => {
                let base = right - left;
                let leftbase = mode - left;
                let ratio = leftbase / base;
                let u = self.next_double();
                if u <= ratio {
                    left + (u * leftbase * base).sqrt()
                } else {
                    right - ((1.0 - u) * (right - mode) * base).sqrt()
                }
            }
            Dist::Wald { mean, scale } => {
                let mu_2l = mean / (2.0 * scale);
                let y = self.gauss();
                let y = mean * y * y;
                let x = mean + mu_2l * (y - (4.0 * scale * y + y * y).sqrt());
                let u = self.next_double();
                if u <= mean / (mean + x) {
                    x
                } else {
                    mean * mean / x
                }
            }
            Dist::StandardGamma { shape } => self.standard_gamma(shape),
            Dist::Gamma { shape, scale } => scale * self.standard_gamma(shape),
            Dist::Chisquare { df } => self.chisquare(df),
            Dist::NoncentralChisquare { df, nonc } => self.noncentral_chisquare(df, nonc),
            Dist::F { dfnum, dfden } => {
                (self.chisquare(dfnum) * dfden) / (self.chisquare(dfden) * dfnum)
            }
            Dist::NoncentralF { dfnum, dfden, nonc } => {
                let t = self.noncentral_chisquare(dfnum, nonc) * dfden;
                t / (self.chisquare(dfden) * dfnum)
            }
            Dist::StandardT { df } => {
                let num = self.gauss();
                let denom = self.standard_gamma(df / 2.0);
                (df / 2.0).sqrt() * num / denom.sqrt()
            }
            Dist::Beta { a, b } => self.beta(a, b),
            Dist::Poisson { lam } => self.poisson(lam) as f64,
            Dist::NegativeBinomial { n, p } => {
                let y = (1.0 - p) / p * self.standard_gamma(n);
                self.poisson(y) as f64
            }
            Dist::Geometric { p } => self.geometric(p) as f64,
            Dist::Logseries { p } => self.logseries(p) as f64,
            Dist::Binomial { n, p } => self.binomial(n as i64, p, true) as f64,
            Dist::Zipf { a } => self.zipf(a) as f64,
        }
    }
}

/// `log(Gamma(x))` by numpy's Stirling series (what PTRS compares against).
fn loggam(x: f64) -> f64 {
    const A: [f64; 10] = [
        8.333333333333333e-02,
        -2.777777777777778e-03,
        7.936507936507937e-04,
        -5.952380952380952e-04,
        8.417508417508418e-04,
        -1.917526917526918e-03,
        6.410_256_410_256_41e-3,
        -2.955065359477124e-02,
        1.796443723688307e-01,
        -1.39243221690590e+00,
    ];
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let n = if x < 7.0 { (7.0 - x) as i64 } else { 0 };
    let mut x0 = x + n as f64;
    let x2 = (1.0 / x0) * (1.0 / x0);
    let lg2pi = 1.8378770664093453e+00;
    let mut gl0 = A[9];
    for &a in A[..9].iter().rev() {
        gl0 *= x2;
        gl0 += a;
    }
    let mut gl = gl0 / x0 + 0.5 * lg2pi + (x0 - 0.5) * x0.ln() - x0;
    if x < 7.0 {
        for _ in 1..=n {
            gl -= (x0 - 1.0).ln();
            x0 -= 1.0;
        }
    }
    gl
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loggam_is_log_gamma() {
        for (x, want) in [
            (3.0, 2f64.ln()),
            (5.0, 24f64.ln()),
            (10.5, 13.940_625_219_403_763),
        ] {
            assert!((loggam(x) - want).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn seeded_samples_match_numpy() {
        // np.random.seed(0); then standard_gamma(2.5), poisson(3.0),
        // poisson(40.0) (PTRS) and beta(0.5, 0.5) (Johnk), as numpy 2.4 gives them.
        let mut rs = RandomState::new(0);
        assert_eq!(
            rs.sample(Dist::StandardGamma { shape: 2.5 }),
            5.93870070324508
        );
        assert_eq!(rs.sample(Dist::Poisson { lam: 3.0 }), 6.0);
        assert_eq!(rs.sample(Dist::Poisson { lam: 40.0 }), 46.0);
        assert_eq!(
            rs.sample(Dist::Beta { a: 0.5, b: 0.5 }),
            0.39929314250610504
        );
    }
}
