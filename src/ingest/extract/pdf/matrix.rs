//! Affine transformation matrices `[a b c d e f]` as PDF uses them: points
//! are row vectors, so `p' = p × M` and `A.then(B)` applies A first.

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Matrix {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub e: f64,
    pub f: f64,
}

impl Matrix {
    pub(super) const IDENTITY: Matrix = Matrix {
        a: 1.0,
        b: 0.0,
        c: 0.0,
        d: 1.0,
        e: 0.0,
        f: 0.0,
    };

    /// From six numbers; `None` unless there are exactly six finite ones.
    pub(super) fn from_slice(values: &[f64]) -> Option<Matrix> {
        match *values {
            [a, b, c, d, e, f] if values.iter().all(|v| v.is_finite()) => {
                Some(Matrix { a, b, c, d, e, f })
            }
            _ => None,
        }
    }

    /// The transform that applies `self`, then `next`.
    pub(super) fn then(&self, next: &Matrix) -> Matrix {
        Matrix {
            a: self.a * next.a + self.b * next.c,
            b: self.a * next.b + self.b * next.d,
            c: self.c * next.a + self.d * next.c,
            d: self.c * next.b + self.d * next.d,
            e: self.e * next.a + self.f * next.c + next.e,
            f: self.e * next.b + self.f * next.d + next.f,
        }
    }

    /// Translation by `(tx, ty)` applied before `self`.
    pub(super) fn pre_translate(&mut self, tx: f64, ty: f64) {
        self.e += tx * self.a + ty * self.c;
        self.f += tx * self.b + ty * self.d;
    }

    pub(super) fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        (
            x * self.a + y * self.c + self.e,
            x * self.b + y * self.d + self.f,
        )
    }

    /// A vector (no translation).
    pub(super) fn apply_vector(&self, x: f64, y: f64) -> (f64, f64) {
        (x * self.a + y * self.c, x * self.b + y * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composition_order() {
        let scale = Matrix {
            a: 2.0,
            d: 2.0,
            ..Matrix::IDENTITY
        };
        let shift = Matrix {
            e: 10.0,
            ..Matrix::IDENTITY
        };
        assert_eq!(scale.then(&shift).apply(1.0, 1.0), (12.0, 2.0));
        assert_eq!(shift.then(&scale).apply(1.0, 1.0), (22.0, 2.0));
        let mut m = scale;
        m.pre_translate(3.0, 0.0);
        assert_eq!(m.apply(0.0, 0.0), (6.0, 0.0));
        assert_eq!(m.apply_vector(1.0, 0.0), (2.0, 0.0));
        assert_eq!(
            Matrix::from_slice(&[1.0, 0.0, 0.0, 1.0, f64::NAN, 0.0]),
            None
        );
    }
}
