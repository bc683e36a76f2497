"""Hand-written YAML topologies (no builder attributes) shared by topology and runtime tests."""
from __future__ import annotations


def two_servers_yaml(servers: int = 2, gpus: int = 4, *, with_server_attr: bool = False,
                     nic_per_gpu: bool = True, nic_rate: str = "100Gbps") -> str:
    """``servers`` x ``gpus`` GPUs: NVSwitch inside each server, PCIe to NICs, one Ethernet switch.

    ``nic_per_gpu``: one NIC per GPU (else one NIC per server on a PCIe switch).
    ``with_server_attr``: write ``server:``/``index:`` on every server node.
    """
    nodes = ["  - {name: sw, kind: switch}"]
    links = []

    def attrs(s, i=None):
        if not with_server_attr:
            return ""
        return f", server: srv{s}" + ("" if i is None else f", index: {i}")
    for s in range(servers):
        nodes.append(f"  - {{name: n{s}.nvs, kind: nvswitch{attrs(s)}}}")
        if not nic_per_gpu:
            nodes.append(f"  - {{name: n{s}.pcie, kind: pcie_switch{attrs(s)}}}")
            nodes.append(f"  - {{name: n{s}.nic, kind: nic{attrs(s, 0)}}}")
            links.append(f"  - {{src: n{s}.pcie, dst: n{s}.nic, rate_bps: 512Gbps, kind: pcie}}")
            links.append(f"  - {{src: n{s}.nic, dst: sw, rate_bps: {nic_rate}}}")
        for i in range(gpus):
            g = f"n{s}.g{i}"
            nodes.append(f"  - {{name: {g}, kind: gpu{attrs(s, i)}}}")
            links.append(f"  - {{src: {g}, dst: n{s}.nvs, rate_bps: 3.6Tbps, kind: nvlink, delay_ns: 100ns}}")
            if nic_per_gpu:
                nic = f"n{s}.nic{i}"
                nodes.append(f"  - {{name: {nic}, kind: nic{attrs(s, i)}}}")
                links.append(f"  - {{src: {g}, dst: {nic}, rate_bps: 512Gbps, kind: pcie}}")
                links.append(f"  - {{src: {nic}, dst: sw, rate_bps: {nic_rate}}}")
            else:
                links.append(f"  - {{src: {g}, dst: n{s}.pcie, rate_bps: 512Gbps, kind: pcie}}")
    return ("name: handwritten\nlink_defaults: {kind: ethernet, delay_ns: 1us}\nnodes:\n" + "\n".join(nodes)
            + "\nlinks:\n" + "\n".join(links) + "\n")


def nvl_rack_yaml(trays: int = 4, gpus_per_tray: int = 4, nvswitches: int = 2) -> str:
    """An NVL72-like rack: ``nvswitches`` NVSwitch nodes joined by NVLink, every GPU on one of them,
    one NIC per GPU on a top-of-rack switch."""
    nodes = ["  - {name: tor, kind: switch}"] + [f"  - {{name: nvs{k}, kind: nvswitch}}" for k in range(nvswitches)]
    links = [f"  - {{src: nvs{k}, dst: nvs{k + 1}, rate_bps: 14.4Tbps, kind: nvlink}}" for k in range(nvswitches - 1)]
    n = 0
    for t in range(trays):
        for i in range(gpus_per_tray):
            g, nic = f"t{t}.g{i}", f"t{t}.nic{i}"
            nodes += [f"  - {{name: {g}, kind: gpu}}", f"  - {{name: {nic}, kind: nic}}"]
            links += [f"  - {{src: {g}, dst: nvs{n % nvswitches}, rate_bps: 7.2Tbps, kind: nvlink}}",
                      f"  - {{src: {g}, dst: {nic}, rate_bps: 512Gbps, kind: pcie}}",
                      f"  - {{src: {nic}, dst: tor, rate_bps: 400Gbps}}"]
            n += 1
    return ("name: nvl_rack\nlink_defaults: {kind: ethernet, delay_ns: 1us}\nnodes:\n" + "\n".join(nodes)
            + "\nlinks:\n" + "\n".join(links) + "\n")
