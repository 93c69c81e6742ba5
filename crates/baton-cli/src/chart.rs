//! A dependency-free PNG bar chart: for each benchmark shape, our TFLOP/s
//! (blue) beside cuBLAS's (grey), on a common scale with 100-TFLOP/s grid
//! lines. Shapes appear left to right in table order.

use baton_reference::gemm_cublas::BenchRow;

const W: usize = 960;
const H: usize = 480;

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
}

/// Encodes an RGB image as PNG (zlib "stored" blocks: no compression).
pub fn encode_png(width: usize, height: usize, rgb: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(height * (1 + 3 * width));
    for row in rgb.chunks(3 * width) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut z = vec![0x78, 0x01];
    let mut blocks = raw.chunks(65_535).peekable();
    while let Some(b) = blocks.next() {
        z.push(u8::from(blocks.peek().is_none()));
        z.extend_from_slice(&(b.len() as u16).to_le_bytes());
        z.extend_from_slice(&(!(b.len() as u16)).to_le_bytes());
        z.extend_from_slice(b);
    }
    z.extend_from_slice(&adler32(&raw).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&(width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(height as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &z);
    chunk(&mut png, b"IEND", &[]);
    png
}

/// Writes the ours-vs-cuBLAS chart of `rows` to `path`.
pub fn write_bar_chart(path: &std::path::Path, rows: &[BenchRow]) -> std::io::Result<()> {
    let groups: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| vec![r.ours_tflops(), r.cublas_tflops()])
        .collect();
    write_grouped_bars(path, &groups)
}

/// Bar colours of the series of a group, in order: ours (blue), the
/// first reference (grey), a second reference (orange).
const SERIES: [[u8; 3]; 3] = [[31, 119, 180], [150, 150, 150], [255, 127, 14]];

/// Writes a grouped bar chart (TFLOP/s, grid lines every 100) to `path`:
/// one group per entry of `groups`, one bar per value (at most 3, coloured
/// as [`SERIES`]: ours first, then the references).
///
/// ```
/// let path = std::env::temp_dir().join("baton-grouped-bars-doc.png");
/// baton_cli::chart::write_grouped_bars(&path, &[vec![900.0, 800.0, 1000.0]]).unwrap();
/// assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
/// ```
pub fn write_grouped_bars(path: &std::path::Path, groups: &[Vec<f64>]) -> std::io::Result<()> {
    let mut img = vec![255u8; W * H * 3];
    let mut fill = |x0: usize, y0: usize, x1: usize, y1: usize, c: [u8; 3]| {
        for y in y0.min(H)..y1.min(H) {
            for x in x0.min(W)..x1.min(W) {
                img[3 * (y * W + x)..3 * (y * W + x) + 3].copy_from_slice(&c);
            }
        }
    };
    let top = groups.iter().flatten().fold(100.0f64, |a, &b| a.max(b)) * 1.1;
    let (left, bottom, plot_h) = (40usize, H - 30, H - 60);
    let y_of = |v: f64| bottom - ((v.max(0.0) / top) * plot_h as f64) as usize;
    let mut g = 0.0;
    while g <= top {
        let y = y_of(g);
        fill(left, y, W - 10, y + 1, [220, 220, 220]);
        g += 100.0;
    }
    fill(left, bottom, W - 10, bottom + 2, [0, 0, 0]);
    let slot = (W - left - 10) / groups.len().max(1);
    for (i, values) in groups.iter().enumerate() {
        let bars = values.len().clamp(1, SERIES.len());
        let bw = slot * 2 / (3 * bars);
        let x0 = left + i * slot + slot / 6;
        for (j, &v) in values.iter().take(SERIES.len()).enumerate() {
            let x = x0 + j * bw;
            fill(x, y_of(v), x + bw, bottom, SERIES[j]);
        }
    }
    std::fs::write(path, encode_png(W, H, &img))
}

#[cfg(test)]
mod tests {
    #[test]
    fn png_has_signature_and_valid_crc() {
        let png = super::encode_png(2, 2, &[0; 12]);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR chunk: length 13, type, data, crc.
        let crc = u32::from_be_bytes(png[29..33].try_into().unwrap());
        assert_eq!(crc, super::crc32(&png[12..29]));
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(super::adler32(b"Wikipedia"), 0x11E6_0398);
    }
}
