# runtime/support: a PCI interface that finds no GPU leaves the process's address space alone. Upstream this belongs in
# test/unit/ (no GPU needed): the bus scan and the mapping are stubbed, PCIIface is tried as NV_IFACE=PCI or the fallback would.
import pytest
from tinygrad.runtime.support.hcq import FileIOInterface
from tinygrad.runtime.support.system import System
from tinygrad.runtime.ops_nv import PCIIface

def test_pci_iface_without_a_gpu_reserves_no_va_range(monkeypatch):
  maps = []
  monkeypatch.setattr(PCIIface, "gpus", [])
  monkeypatch.setattr(type(System), "pci_scan_bus", lambda *args, **kwargs: [])
  monkeypatch.setattr(FileIOInterface, "anon_mmap", staticmethod(lambda *args: maps.append(args) or args[0]))
  with pytest.raises(IndexError): PCIIface(None, 0)
  assert maps == []
