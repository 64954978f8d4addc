#!/usr/bin/python3
"""The SSIM and PNG fixtures, made once and committed: run by hand, never
by a test.

    /usr/bin/python3 tests/gen_ssim_fixtures.py      (from the repository)

needs Debian's python3-skimage (scikit-image, numpy, scipy) and
python3-pil, which the build and the tests do not: the reference values
come from an implementation that is not ours, computed when the test data
is made, and are committed beside the pictures as JSON.  Run it again only
to add a case; the pictures come out the same (fixed seeds), and the
values are what scikit-image says about them.

tests/fixtures/ssim/
    <case>.a.png, <case>.b.png   a pair (a: the frame, b: the golden)
    ssim.json                    per pair: SSIM of R, G, B (scikit-image's
                                 structural_similarity on each channel,
                                 gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False,
                                 data_range=255), their minimum, the luma
                                 SSIM (rgb2gray, data_range=1), the share
                                 of changed pixels, the largest difference,
                                 and samples of the per-pixel map (the
                                 smallest of the three channels' full=True
                                 images, borders included)
tests/fixtures/png/
    <case>.png                   the codec's cases: colour types, bit
                                 depths, interlacing, transparency, and
                                 broken files
    png.json                     what each decodes to (RGBA, 8-bit), or
                                 that it must be refused
"""
import json
import os
import struct
import sys
import zlib

import numpy as np
import skimage
from PIL import Image
from skimage.color import rgb2gray
from skimage.metrics import structural_similarity

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SSIM_DIR = os.path.join(TOP, "tests", "fixtures", "ssim")
PNG_DIR = os.path.join(TOP, "tests", "fixtures", "png")
ARGS = dict(gaussian_weights=True, sigma=1.5, use_sample_covariance=False)


# --- pictures ---------------------------------------------------------------

def scene(w=160, h=120, seed=1):
    """A frame of a small game: sky, a chequered ground, three crates with a
    blotchy texture and side shading.  Returns the picture and each crate's
    mask."""
    rs = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(float)
    img = np.zeros((h, w, 3))
    t = y / h
    img[..., 0] = 90 + 60 * t
    img[..., 1] = 140 + 50 * t
    img[..., 2] = 220 - 20 * t
    ground = y > h * 0.55
    chk = ((x // 10 + y // 6) % 2).astype(float)
    for c, (u, v) in enumerate([(70, 100), (110, 140), (60, 80)]):
        img[..., c] = np.where(ground, u + (v - u) * chk, img[..., c])
    masks = []
    for bx, by, bw, bh, col in [(20, 40, 40, 35, (170, 120, 60)),
                                (75, 30, 30, 50, (120, 120, 130)),
                                (115, 50, 35, 30, (60, 150, 70))]:
        small = rs.rand(bh // 4 + 2, bw // 4 + 2)
        tex = np.kron(small, np.ones((4, 4)))[:bh, :bw] * 60 - 30
        shade = 1.0 - 0.4 * (np.arange(bw) / bw)[None, :]
        for c in range(3):
            img[by:by + bh, bx:bx + bw, c] = (col[c] + tex) * shade
        m = np.zeros((h, w), bool)
        m[by:by + bh, bx:bx + bw] = True
        masks.append(m)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8), masks, ground


def u8(a):
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


def cases():
    """name -> (a, b, what).  a is the frame, b the golden."""
    base, crates, _ = scene()
    again = scene()[0]  # the same frame made again: same seed, same pixels
    out = {}
    out["same"] = (base, again, "the same frame made twice")

    # one material (the two left crates share it) tinted: the case luma
    # alone lets through
    t = base.astype(float)
    m = crates[0] | crates[1]
    for c, f in enumerate((1.1, 0.75, 0.6)):
        t[m, c] *= f
    out["tint"] = (u8(t), base, "the crates' material tinted x(1.1, 0.75, 0.6): "
                   "luma passes at 0.98, blue does not")

    rs = np.random.RandomState(7)
    out["noise"] = (u8(base + rs.normal(0, 6, base.shape)), base,
                    "Gaussian noise of sigma 6 on every channel")

    culled = base.copy()
    # the right crate not drawn: the ground or sky behind it
    h, w, _ = base.shape
    yy, xx = np.mgrid[0:h, 0:w]
    skyc = np.stack([90 + 60 * yy / h, 140 + 50 * yy / h, 220 - 20 * yy / h], -1)
    chk = ((xx // 10 + yy // 6) % 2)[..., None]
    groundc = np.array([70, 110, 60]) + np.array([30, 30, 20]) * chk
    behind = np.where((yy > h * 0.55)[..., None], groundc, skyc)
    culled[crates[2]] = u8(behind)[crates[2]]
    out["culled"] = (culled, base, "one crate culled")

    half = base[::2, ::2].repeat(2, 0).repeat(2, 1)
    out["halfres"] = (half, base, "rendered at half resolution, scaled up")

    shift = np.concatenate([base[:, :1], base[:, :-1]], axis=1)
    out["shift"] = (shift, base, "everything one pixel to the right")

    k = np.ones((3, 3)) / 9
    pad = np.pad(base.astype(float), ((1, 1), (1, 1), (0, 0)), mode="edge")
    blur = sum(pad[i:i + h, j:j + w] * k[i, j] for i in range(3) for j in range(3))
    out["blur"] = (u8(blur), base, "a 3x3 box blur")

    rs = np.random.RandomState(11)
    a = rs.randint(0, 256, (11, 11, 3)).astype(np.uint8)
    b = u8(a.astype(float) * 0.9 + 10)
    out["smallest"] = (a, b, "11x11, the smallest: the mean is one pixel's")

    rs = np.random.RandomState(13)
    g = np.mgrid[0:23, 0:37]
    a = u8(np.stack([g[1] * 6, g[0] * 10, (g[0] + g[1]) * 4], -1) + rs.normal(0, 10, (23, 37, 3)))
    b = u8(a.astype(float) + rs.normal(0, 12, a.shape))
    out["odd"] = (a, b, "37x23, noisy: odd sides, every border pixel in the map")

    a = np.concatenate([base[40:51], base[40:51]], axis=1)[:, :300].copy()
    b = u8(a.astype(float) * np.linspace(0.8, 1.1, 300)[None, :, None])
    out["strip"] = (a, b, "300x11, one window high")

    a = np.full((32, 32, 3), 100, np.uint8)
    b = np.full((32, 32, 3), 120, np.uint8)
    b[..., 2] = 100
    out["flat"] = (a, b, "flat pictures: no variance at all")

    a = np.zeros((16, 16, 3), np.uint8)
    b = np.full((16, 16, 3), 255, np.uint8)
    out["extremes"] = (a, b, "black against white")

    # RGBA: the alpha differs, the colour does not -> 1 on every channel
    rgba_a = np.dstack([base, np.full(base.shape[:2], 255, np.uint8)])
    alpha = np.full(base.shape[:2], 255, np.uint8)
    alpha[:, :40] = 128
    rgba_b = np.dstack([base, alpha])
    out["alpha"] = (rgba_a, rgba_b, "RGBA, the alpha differs and is not compared")
    # RGBA against RGB with a tint: mixed channel counts
    out["rgba-rgb"] = (np.dstack([out["tint"][0], np.full(base.shape[:2], 255, np.uint8)]),
                       base, "an RGBA frame against an RGB golden (the tint)")
    return out


def ssim_of(a, b):
    per, maps = [], []
    for c in range(3):
        v, s = structural_similarity(a[..., c], b[..., c], data_range=255, full=True, **ARGS)
        per.append(float(v))
        maps.append(s)
    luma = structural_similarity(rgb2gray(a[..., :3]), rgb2gray(b[..., :3]), data_range=1.0, **ARGS)
    return per, float(luma), np.minimum(np.minimum(maps[0], maps[1]), maps[2])


def write_ssim():
    os.makedirs(SSIM_DIR, exist_ok=True)
    doc = {
        "v": 1,
        "reference": "scikit-image %s structural_similarity(x, y, gaussian_weights=True, "
                     "sigma=1.5, use_sample_covariance=False, data_range=255) per channel; "
                     "luma: rgb2gray, data_range=1.0" % skimage.__version__,
        "made_by": "tests/gen_ssim_fixtures.py",
        "changed": "a pixel whose R, G or B differs at all (alpha not compared)",
        "cases": [],
    }
    for name, (a, b, what) in cases().items():
        pa, pb = name + ".a.png", name + ".b.png"
        Image.fromarray(a).save(os.path.join(SSIM_DIR, pa), optimize=True)
        Image.fromarray(b).save(os.path.join(SSIM_DIR, pb), optimize=True)
        # the reference is computed on the files as written
        a = np.asarray(Image.open(os.path.join(SSIM_DIR, pa)))
        b = np.asarray(Image.open(os.path.join(SSIM_DIR, pb)))
        per, luma, m = ssim_of(a, b)
        h, w = a.shape[:2]
        d = np.abs(a[..., :3].astype(int) - b[..., :3].astype(int)).max(axis=-1)
        rs = np.random.RandomState(len(name))
        pts = [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (2, h // 2),
               (w // 2, 1), (w - 3, h - 2), (w // 2, h // 2)]
        pts += [(int(rs.randint(w)), int(rs.randint(h))) for _ in range(8)]
        doc["cases"].append({
            "name": name, "what": what, "a": pa, "b": pb,
            "width": w, "height": h,
            "ssim": per, "min": min(per), "luma": luma,
            "changed": int((d > 0).sum()), "changedShare": float((d > 0).mean()),
            "maxDelta": int(d.max()),
            "map": [[x, y, float(m[y, x])] for x, y in pts],
        })
        print("%-9s %3dx%-3d R %.5f G %.5f B %.5f luma %.5f changed %.3f" % (
            name, w, h, per[0], per[1], per[2], luma, (d > 0).mean()))
    with open(os.path.join(SSIM_DIR, "ssim.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


# --- PNG files made byte by byte (what PIL will not write) -------------------

def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def png_bytes(w, h, depth, ctype, rows, interlace=0, extra=b""):
    """rows: the raw scanline bytes, filter bytes included, already in pass
    order when interlaced."""
    ihdr = struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
            chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png():
    os.makedirs(PNG_DIR, exist_ok=True)
    doc = {"v": 1, "made_by": "tests/gen_ssim_fixtures.py",
           "note": "pixels: RGBA, 8-bit, row by row; tolerance: the largest "
                   "difference allowed per value", "cases": []}

    def good(name, data, rgba, what, tolerance=0):
        with open(os.path.join(PNG_DIR, name), "wb") as f:
            f.write(data)
        h, w = rgba.shape[:2]
        doc["cases"].append({"file": name, "what": what, "width": w, "height": h,
                             "tolerance": tolerance,
                             "rgba": [int(v) for v in rgba.reshape(-1)]})

    def bad(name, data, what):
        with open(os.path.join(PNG_DIR, name), "wb") as f:
            f.write(data)
        doc["cases"].append({"file": name, "what": what, "refused": True})

    w, h = 13, 7
    yy, xx = np.mgrid[0:h, 0:w]
    gray = (xx * 19 + yy * 7).astype(np.uint8)
    rows = b"".join(b"\x00" + bytes(r) for r in gray)
    good("gray8.png", png_bytes(w, h, 8, 0, rows),
         np.dstack([gray, gray, gray, np.full_like(gray, 255)]), "8-bit grey")

    alpha = (255 - xx * 15).astype(np.uint8)
    la = np.dstack([gray, alpha])
    rows = b"".join(b"\x00" + bytes(r.reshape(-1)) for r in la)
    good("gray-alpha.png", png_bytes(w, h, 8, 4, rows),
         np.dstack([gray, gray, gray, alpha]), "8-bit grey with alpha")

    pal = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [200, 100, 50]], np.uint8)
    trns = bytes([255, 128, 0])  # the fourth entry is opaque
    idx = ((xx + yy) % 4).astype(np.uint8)
    rows = b"".join(b"\x00" + bytes(r) for r in idx)
    extra = chunk(b"PLTE", pal.tobytes()) + chunk(b"tRNS", trns)
    a = np.array([255, 128, 0, 255], np.uint8)[idx]
    good("palette.png", png_bytes(w, h, 8, 3, rows, extra=extra),
         np.dstack([pal[idx], a]), "a palette with tRNS")

    # 16-bit values that are multiples of 257: the 8-bit value is exact
    # whatever the rounding; one pixel that is not, within 1
    rgb8 = np.dstack([gray, 255 - gray, (gray // 2 + 60).astype(np.uint8)])
    rgb16 = rgb8.astype(np.uint16) * 257
    rgb16[0, 0] = [0x8000, 0x7fff, 0x1234]
    rows = b"".join(b"\x00" + r.astype(">u2").tobytes() for r in rgb16)
    want = np.dstack([rgb8, np.full_like(gray, 255)])
    want[0, 0, :3] = [128, 127, 18]
    good("rgb16.png", png_bytes(w, h, 16, 2, rows), want,
         "16-bit RGB, no gAMA (taken as sRGB)", tolerance=1)

    # Adam7: the seven passes' scanlines, one after the other
    rs = np.random.RandomState(5)
    img = rs.randint(0, 256, (h, w, 3)).astype(np.uint8)
    raw = b""
    for x0, y0, dx, dy in ADAM7:
        sub = img[y0::dy, x0::dx]
        if sub.shape[0] and sub.shape[1]:
            raw += b"".join(b"\x00" + r.tobytes() for r in sub)
    good("interlaced.png", png_bytes(w, h, 8, 2, raw, interlace=1),
         np.dstack([img, np.full_like(gray, 255)]), "Adam7-interlaced RGB")

    rows = b"".join(b"\x00" + r.tobytes() for r in img)
    whole = png_bytes(w, h, 8, 2, rows)
    good("trailing.png", whole + b"junk after IEND",
         np.dstack([img, np.full_like(gray, 255)]),
         "bytes after IEND (ignored, as every reader does)")

    # broken
    bad("truncated.png", whole[:len(whole) // 2], "cut in the middle of IDAT")
    b = bytearray(whole)
    b[29] ^= 0xff  # IHDR's CRC
    bad("bad-crc.png", bytes(b), "IHDR's CRC wrong")
    bad("not-png.png", b"GIF89a this is not a PNG at all\n", "not a PNG")
    bad("empty.png", b"", "no bytes")
    bad("huge.png", png_bytes(100000, 100000, 8, 2, b"\x00" * 64),
        "a header of 100000x100000 and almost no data")
    bad("no-idat.png", b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(
        ">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IEND", b""), "no image data")
    bad("signature-only.png", b"\x89PNG\r\n\x1a\n", "the signature and nothing else")
    with open(os.path.join(PNG_DIR, "png.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    write_ssim()
    write_png()
    sys.exit(0)
