//! How far quantisation moves the network's output, measured and modelled.

use rayon::prelude::*;

use super::dataset::Dataset;
use super::float::FloatNet;
use crate::core::Color;
use crate::nnue::{Accumulator, Network, QA, QB, SCALE};

/// Standard deviation (centipawns) of the quantised network's evaluation around the float
/// one's that rounding alone explains, for a position given by its White-perspective
/// features. Model: each accumulator value carries (n + 1) independent roundings, uniform
/// within 1/(2 QA), so its error has variance (n + 1) / (12 QA^2); SCReLU passes it on with
/// slope 2x inside (0, 1), the output weights scale it, and each output weight's own rounding
/// adds screlu^2 / (12 QB^2). The integer divisions add under 1.1 cp more, not included.
pub fn rounding_sigma_cp(float: &FloatNet, white_feats: &[u16], stm: Color) -> f64 {
    let l = float.layout();
    let w2 = &float.params[l.out(float.bucket(white_feats))..];
    let mut halves = [vec![0.0; l.h], vec![0.0; l.h]];
    float.accumulate(white_feats, stm == Color::Black, &mut halves[0]);
    float.accumulate(white_feats, stm == Color::White, &mut halves[1]);
    let acc_var = (white_feats.len() + 1) as f64 / (12.0 * (QA * QA) as f64);
    let mut var = 0.0;
    for (half, vals) in halves.iter().enumerate() {
        for (j, &x) in vals.iter().enumerate() {
            let x = x as f64;
            let slope = if x > 0.0 && x < 1.0 { 2.0 * x } else { 0.0 };
            var += (slope * w2[half * l.h + j] as f64).powi(2) * acc_var;
            var += x.clamp(0.0, 1.0).powi(4) / (12.0 * (QB * QB) as f64);
        }
    }
    var.sqrt() * SCALE as f64
}

/// Quantised against float evaluation over `data`: the mean and largest |difference| and
/// the mean difference the rounding model ([`rounding_sigma_cp`]) predicts, centipawns.
pub fn quantisation_error(float: &FloatNet, net: &Network, data: &Dataset) -> (f64, f64, f64) {
    let rows: Vec<(f64, f64)> = (0..data.len())
        .into_par_iter()
        .map_init(
            || Box::new(Accumulator::new()),
            |acc, i| {
                let stm = data.side_to_move(i);
                let feats = data.features(i);
                acc.refresh_from_features(net, feats);
                let q = net.evaluate(acc, stm) as f64;
                // The mean of |normal(0, sigma)| is sigma * sqrt(2 / pi).
                let expected =
                    rounding_sigma_cp(float, feats, stm) * (2.0 / std::f64::consts::PI).sqrt();
                ((q - float.eval_cp(feats, stm) as f64).abs(), expected)
            },
        )
        .collect();
    let n = rows.len().max(1) as f64;
    let max = rows.iter().map(|r| r.0).fold(0.0, f64::max);
    (rows.iter().map(|r| r.0).sum::<f64>() / n, max, rows.iter().map(|r| r.1).sum::<f64>() / n)
}
