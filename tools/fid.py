"""FID-style score in the feature space of our Fashion-MNIST classifier (not Inception: numbers
are only comparable with other numbers from this file and the same classifier asset)."""
import numpy as np
import torch
import torch.nn.functional as F


def lowres_to_32(x):
    """16x16 (or 8x8) images -> 32x32 by nearest upsampling, how low-res samples are scored."""
    return F.interpolate(x, scale_factor=32.0 / x.shape[-1], mode="nearest")


def write_reference_stats(clf, size, path):
    """Feature statistics of the test set average-pooled to size x size and scored as low-res
    samples are (train_classifier.py writes 32 and 16; the gpt4 export asks for 8)."""
    import common as C
    x, _ = C.load_fmnist("test")
    x = C.to_unit(x)
    if size != x.shape[-1]:
        x = lowres_to_32(F.avg_pool2d(x, x.shape[-1] // size))
    mu, sigma = stats(features(clf, x))
    np.savez(path, mu=mu, sigma=sigma)


@torch.no_grad()
def features(clf, x, bs=500):
    clf.eval()
    return torch.cat([clf.features(x[i:i + bs]) for i in range(0, len(x), bs)]).double().numpy()


def stats(feats):
    return feats.mean(0), np.cov(feats, rowvar=False)


def _sqrt_psd(m):
    w, v = np.linalg.eigh((m + m.T) / 2)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


def frechet(mu1, s1, mu2, s2):
    """|mu1-mu2|^2 + tr(s1 + s2 - 2 (s1 s2)^1/2), via the symmetric form sqrt(s1) s2 sqrt(s1)."""
    r1 = _sqrt_psd(s1)
    cross = np.sqrt(np.clip(np.linalg.eigvalsh(r1 @ s2 @ r1), 0, None)).sum()
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * cross)


def load_stats(path):
    d = np.load(path)
    return d["mu"], d["sigma"]
