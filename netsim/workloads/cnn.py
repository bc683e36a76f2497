"""CNNs as lists of layers with true parameter counts and FLOPs.

Built programmatically from the architectures as torchvision defines them
(224×224 input, 1000 classes): VGG16 (13 3×3 convs with bias, classifier
25088→4096→4096→1000), ResNet50/101 (bottleneck v1.5: stride on the 3×3 conv,
convs without bias, BatchNorm weight+bias per channel, 1×1 projection
shortcuts).  Each conv (with its BatchNorm) or fully-connected layer is one
:class:`~netsim.workloads.layers.Layer`.  FLOPs count multiply-adds of convs and
fc layers as 2 FLOPs; BatchNorm/ReLU/pooling FLOPs are left out (≈1 %).
Backward = 2 × forward.  Parameter counts are exact (ResNet50 25,557,032;
ResNet101 44,549,160; VGG16 138,357,544); forward multiply-adds match
torchvision's published 4.09 / 7.80 / 15.47 G.

>>> sum(l.params for l in resnet(50))
25557032
>>> sum(l.params for l in vgg16())
138357544
"""
from __future__ import annotations

from .layers import Block, Layer


def _conv_out(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


class _Builder:
    def __init__(self, size: int, channels: int):
        self.size, self.channels = size, channels
        self.layers: list[Layer] = []

    def conv(self, name: str, cin: int, cout: int, k: int, stride: int, pad: int, size_in: int, *,
             bias: bool, bn: bool) -> int:
        out = _conv_out(size_in, k, stride, pad)
        flops = 2.0 * k * k * cin * cout * out * out
        tensors = [(name + ".weight", k * k * cin * cout)]
        if bias:
            tensors.append((name + ".bias", cout))
        if bn:
            tensors.append((name + ".bn", 2 * cout))
        self.layers.append(Layer(name, (Block("conv", flops, 2 * flops, True, 0, tuple(tensors)),),
                                 cout * out * out))
        return out

    def fc(self, name: str, fin: int, fout: int) -> None:
        flops = 2.0 * fin * fout
        self.layers.append(Layer(name, (Block("fc", flops, 2 * flops, True, 0,
                                              ((name + ".weight", fin * fout), (name + ".bias", fout))),),
                                 fout))


def vgg16(image: int = 224, classes: int = 1000) -> list[Layer]:
    """VGG16 (configuration D, Simonyan & Zisserman 2015), torchvision layout."""
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    b = _Builder(image, 3)
    size, cin, i = image, 3, 0
    for c in cfg:
        if c == "M":
            size //= 2
            continue
        size = b.conv(f"conv{i}", cin, c, 3, 1, 1, size, bias=True, bn=False)
        cin, i = c, i + 1
    b.fc("fc0", 512 * 7 * 7, 4096)  # adaptive average pool to 7x7 first
    b.fc("fc1", 4096, 4096)
    b.fc("fc2", 4096, classes)
    return b.layers


_RESNET_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


def resnet(depth: int = 50, image: int = 224, classes: int = 1000) -> list[Layer]:
    """ResNet-50/101/152 (He et al. 2016) with torchvision's bottleneck v1.5."""
    b = _Builder(image, 3)
    size = b.conv("conv1", 3, 64, 7, 2, 3, image, bias=False, bn=True)
    size = _conv_out(size, 3, 2, 1)  # max pool
    cin = 64
    for stage, (n, width) in enumerate(zip(_RESNET_BLOCKS[depth], (64, 128, 256, 512))):
        for j in range(n):
            stride = 2 if (j == 0 and stage > 0) else 1
            p = f"layer{stage + 1}.{j}"
            s_in = size
            b.conv(p + ".conv1", cin, width, 1, 1, 0, s_in, bias=False, bn=True)
            size = b.conv(p + ".conv2", width, width, 3, stride, 1, s_in, bias=False, bn=True)
            b.conv(p + ".conv3", width, width * 4, 1, 1, 0, size, bias=False, bn=True)
            if j == 0:
                b.conv(p + ".downsample", cin, width * 4, 1, stride, 0, s_in, bias=False, bn=True)
            cin = width * 4
    b.fc("fc", 2048, classes)
    return b.layers


CNN_PRESETS = {
    "resnet50": (lambda: resnet(50), "He et al. 2016; torchvision resnet50 (25,557,032 params, 4.09 GMAC)"),
    "resnet101": (lambda: resnet(101), "He et al. 2016; torchvision resnet101 (44,549,160 params, 7.80 GMAC)"),
    "resnet152": (lambda: resnet(152), "He et al. 2016; torchvision resnet152 (60,192,808 params, 11.51 GMAC)"),
    "vgg16": (lambda: vgg16(), "Simonyan & Zisserman 2015; torchvision vgg16 (138,357,544 params, 15.47 GMAC)"),
}
