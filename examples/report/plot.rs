//! The strong-scaling plot of one algorithm, as SVG (plotters): x = devices, y = speedup
//! over one device, one line per graph, and the ideal (linear) speedup dashed. A graph
//! without a one-device run is plotted as its time relative to its fewest-device run.

use plotters::prelude::*;

use crate::markdown::title;
use crate::series::Series;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// `(devices, speedup)` of a series, relative to its fewest-device run (the runs of that run's
/// commit only: runs of two builds compare the builds as much as the device counts).
fn points(s: &Series) -> Vec<(f64, f64)> {
    let Some((&d0, base)) = s.points.iter().next() else {
        return Vec::new();
    };
    s.points
        .iter()
        .filter(|(_, m)| m.commit == base.commit)
        .map(|(&d, m)| (d as f64, d0 as f64 * base.median_ms / m.median_ms))
        .collect()
}

/// The SVG document of `algorithm`'s plot.
pub fn scaling_svg(
    algorithm: &str,
    series: &[Series],
) -> Result<String, Box<dyn std::error::Error>> {
    let lines: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| (format!("{} ({})", s.graph, s.machine), points(s)))
        .collect();
    let max_devices = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(d, _)| *d))
        .fold(2f64, f64::max);
    let max_speedup = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, s)| *s))
        .fold(max_devices, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 440)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: strong scaling", title(algorithm)),
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(52)
            .build_cartesian_2d(0.8f64..max_devices + 0.2, 0f64..max_speedup * 1.1)?;
        chart
            .configure_mesh()
            .x_desc("devices")
            .y_desc("speedup over one device")
            .x_labels(max_devices as usize + 1)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(1.0, 1.0), (max_devices, max_devices)],
                6,
                4,
                BLACK.mix(0.5).stroke_width(1),
            ))?
            .label("ideal")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
        for (i, (label, pts)) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::series_of;
    use crate::tests_support::sample;

    #[test]
    fn one_line_per_graph_with_the_ideal() {
        let records = vec![
            sample("bfs", "kron21.sym", 1, 8.0),
            sample("bfs", "kron21.sym", 2, 5.0),
            sample("bfs", "road:side=2048,p=0.6", 1, 80.0),
            sample("bfs", "road:side=2048,p=0.6", 2, 90.0),
        ];
        let svg = scaling_svg("bfs", &series_of(&records, "bfs")).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("BFS: strong scaling"));
        assert!(svg.contains("kron21.sym"));
        assert!(svg.contains("road:side=2048,p=0.6"));
        assert!(svg.contains("ideal"));
        assert!(svg.matches("<circle").count() >= 4, "a marker per point");
    }

    #[test]
    fn speedup_is_relative_to_the_fewest_devices() {
        let records = vec![sample("cc", "g", 2, 10.0), sample("cc", "g", 4, 5.0)];
        let s = series_of(&records, "cc");
        assert_eq!(points(&s[0]), vec![(2.0, 2.0), (4.0, 4.0)]);
    }

    #[test]
    fn a_point_of_another_build_is_left_out() {
        let mut newer = sample("cc", "g", 4, 5.0);
        newer.commit = "def5678".into();
        let records = vec![sample("cc", "g", 1, 10.0), newer];
        assert_eq!(points(&series_of(&records, "cc")[0]), vec![(1.0, 1.0)]);
    }
}
