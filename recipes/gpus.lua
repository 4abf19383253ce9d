-- The GPU catalogue: GPUs fdtune knows by name, with published vendor numbers, so that
-- `--gpu MI250X` works on a machine without that GPU (dry runs, exports) and so that a live
-- device gets what its driver does not report (AMD's Infinity Cache).
--
-- Fields are those recipes see as `dev`: vendor, arch, compute_units, warp_size,
-- max_threads_per_block (default 1024), shared_per_block (static limit per block, bytes),
-- shared_per_block_optin (default: shared_per_block), l2_bytes, infinity_cache_bytes
-- (default 0), mem_bytes, peak_bw_gbs (GB/s, 10^9 bytes), achievable_bw_gbs (optional: the
-- sustained bandwidth published for the model, which fdtune's model never predicts above);
-- plus name, aliases, match (extra substrings of the driver's device name), source and note.
--
-- Rules: names and aliases compare case-insensitively on letters and digits only, and must
-- be unique; an architecture (gfx90a, sm_90) is never a name, because several GPUs share one.
-- MI250 and MI250X are two GCDs per package and HIP shows each GCD as a device, so their
-- entries describe one GCD. l2_bytes is what one kernel's device reports (MI300: per XCD).
-- Memory sizes are the nominal capacities.

-- ---------------------------------------------------------------- AMD Instinct

gpu {
  name = "MI50", aliases = { "Instinct MI50", "Radeon Instinct MI50" },
  vendor = "AMD", arch = "gfx906",
  compute_units = 60, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 4 * MiB, mem_bytes = 16 * GiB, peak_bw_gbs = 1024,
  source = "AMD Radeon Instinct MI50 data sheet: 60 CUs, 16 GB HBM2, 1 TB/s; L2 4 MB (FD Laplacian part 4)",
  note = "a 32 GB variant exists with the same bandwidth",
}

gpu {
  name = "MI100", aliases = { "Instinct MI100" },
  vendor = "AMD", arch = "gfx908",
  compute_units = 120, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 8 * MiB, mem_bytes = 32 * GiB, peak_bw_gbs = 1228.8,
  source = "AMD Instinct MI100 data sheet: 120 CUs, 32 GB HBM2, 1.2288 TB/s, 8 MB L2",
}

gpu {
  name = "MI210", aliases = { "Instinct MI210" },
  vendor = "AMD", arch = "gfx90a",
  compute_units = 104, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 8 * MiB, mem_bytes = 64 * GiB, peak_bw_gbs = 1638.4,
  source = "AMD Instinct MI210 data sheet: 104 CUs, 64 GB HBM2e, 1.6384 TB/s, 8 MB L2",
}

gpu {
  name = "MI250", aliases = { "Instinct MI250", "MI250 GCD" },
  vendor = "AMD", arch = "gfx90a",
  compute_units = 104, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 8 * MiB, mem_bytes = 64 * GiB, peak_bw_gbs = 1638.4,
  source = "AMD Instinct MI250 data sheet: 208 CUs, 128 GB HBM2e, 3.2768 TB/s per package (2 GCDs); 8 MB L2 per GCD",
  note = "one of the two GCDs of an MI250: HIP shows each GCD as a device",
}

gpu {
  name = "MI250X", aliases = { "Instinct MI250X", "MI250X GCD" },
  vendor = "AMD", arch = "gfx90a",
  compute_units = 110, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 8 * MiB, mem_bytes = 64 * GiB, peak_bw_gbs = 1638.4, achievable_bw_gbs = 1300,
  source = "AMD Instinct MI250X data sheet: 220 CUs, 128 GB HBM2e, 3.2768 TB/s per package (2 GCDs); 8 MB L2 per GCD; achievable: the seeds' BabelStream figure for one GCD, 1.3 to 1.4 TB/s (Seismic stencil codes, part 1)",
  note = "one of the two GCDs of an MI250X: HIP shows each GCD as a device",
}

gpu {
  name = "MI300A", aliases = { "Instinct MI300A" },
  vendor = "AMD", arch = "gfx942",
  compute_units = 228, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 4 * MiB, infinity_cache_bytes = 256 * MiB,
  mem_bytes = 128 * GiB, peak_bw_gbs = 5300,
  source = "AMD Instinct MI300A data sheet: 228 CUs, 128 GB unified HBM3, 5.3 TB/s, 256 MB Infinity Cache; 4 MB L2 per XCD",
  note = "APU: the memory is shared with the CPU cores",
}

gpu {
  name = "MI300X", aliases = { "Instinct MI300X" },
  vendor = "AMD", arch = "gfx942",
  compute_units = 304, warp_size = 64, shared_per_block = 64 * KiB,
  l2_bytes = 4 * MiB, infinity_cache_bytes = 256 * MiB,
  mem_bytes = 192 * GiB, peak_bw_gbs = 5300,
  source = "AMD Instinct MI300X data sheet: 304 CUs, 192 GB HBM3, 5.3 TB/s, 256 MB Infinity Cache; 4 MB L2 per XCD",
}

-- ---------------------------------------------------------------- AMD Radeon (RDNA: wave32)

gpu {
  name = "RX 6900 XT", aliases = { "Radeon RX 6900 XT", "6900XT" },
  vendor = "AMD", arch = "gfx1030",
  compute_units = 80, warp_size = 32, shared_per_block = 64 * KiB,
  l2_bytes = 4 * MiB, infinity_cache_bytes = 128 * MiB,
  mem_bytes = 16 * GiB, peak_bw_gbs = 512,
  source = "AMD Radeon RX 6900 XT specifications: 80 CUs, 16 GB GDDR6 at 16 Gbps on 256 bits (512 GB/s), 4 MB L2, 128 MB Infinity Cache",
}

gpu {
  name = "RX 7900 XTX", aliases = { "Radeon RX 7900 XTX", "7900XTX" },
  vendor = "AMD", arch = "gfx1100",
  compute_units = 96, warp_size = 32, shared_per_block = 64 * KiB,
  l2_bytes = 6 * MiB, infinity_cache_bytes = 96 * MiB,
  mem_bytes = 24 * GiB, peak_bw_gbs = 960,
  source = "AMD Radeon RX 7900 XTX specifications: 96 CUs, 24 GB GDDR6 at 20 Gbps on 384 bits (960 GB/s), 6 MB L2, 96 MB Infinity Cache",
}

-- ---------------------------------------------------------------- NVIDIA
-- 48 KiB is the static shared memory per block; more needs the opt-in attribute.

gpu {
  name = "A100 40GB", aliases = { "A100", "A100-40GB" },
  match = { "A100-SXM4-40GB", "A100-PCIE-40GB" },
  vendor = "NVIDIA", arch = "sm_80",
  compute_units = 108, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 163 * KiB,
  l2_bytes = 40 * MiB, mem_bytes = 40 * GiB, peak_bw_gbs = 1555,
  source = "NVIDIA A100 Tensor Core GPU data sheet and architecture whitepaper: 108 SMs, 40 GB HBM2, 1555 GB/s, 40 MB L2, 163 KB shared memory per block (opt-in)",
  note = "SXM4 and PCIe 40 GB have the same memory bandwidth",
}

gpu {
  name = "A100 80GB", aliases = { "A100-80GB", "A100 80GB SXM", "A100-SXM4-80GB" },
  vendor = "NVIDIA", arch = "sm_80",
  compute_units = 108, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 163 * KiB,
  l2_bytes = 40 * MiB, mem_bytes = 80 * GiB, peak_bw_gbs = 2039,
  source = "NVIDIA A100 Tensor Core GPU data sheet: A100 80GB SXM, 108 SMs, 80 GB HBM2e, 2039 GB/s, 40 MB L2",
}

gpu {
  name = "A100 80GB PCIe", aliases = { "A100-80GB-PCIe" },
  vendor = "NVIDIA", arch = "sm_80",
  compute_units = 108, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 163 * KiB,
  l2_bytes = 40 * MiB, mem_bytes = 80 * GiB, peak_bw_gbs = 1935,
  source = "NVIDIA A100 Tensor Core GPU data sheet: A100 80GB PCIe, 108 SMs, 80 GB HBM2e, 1935 GB/s, 40 MB L2",
}

gpu {
  name = "H100 SXM", aliases = { "H100", "H100-SXM", "H100 SXM5" },
  match = { "H100 80GB HBM3" },
  vendor = "NVIDIA", arch = "sm_90",
  compute_units = 132, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 227 * KiB,
  l2_bytes = 50 * MiB, mem_bytes = 80 * GiB, peak_bw_gbs = 3350,
  source = "NVIDIA H100 Tensor Core GPU data sheet and Hopper whitepaper: H100 SXM5, 132 SMs, 80 GB HBM3, 3.35 TB/s, 50 MB L2, 227 KB shared memory per block (opt-in)",
  note = "fdtune's design notes measured ~2.95-3.0 TB/s device-to-device copy on one",
}

gpu {
  name = "H100 PCIe", aliases = { "H100-PCIe" },
  vendor = "NVIDIA", arch = "sm_90",
  compute_units = 114, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 227 * KiB,
  l2_bytes = 50 * MiB, mem_bytes = 80 * GiB, peak_bw_gbs = 2000,
  source = "NVIDIA H100 Tensor Core GPU data sheet and Hopper whitepaper: H100 PCIe, 114 SMs, 80 GB HBM2e, 2 TB/s, 50 MB L2",
}

gpu {
  name = "H100 NVL", aliases = { "H100-NVL" },
  vendor = "NVIDIA", arch = "sm_90",
  compute_units = 132, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 227 * KiB,
  l2_bytes = 50 * MiB, mem_bytes = 94 * GiB, peak_bw_gbs = 3900,
  source = "NVIDIA H100 Tensor Core GPU data sheet: H100 NVL, 94 GB HBM3, 3.9 TB/s per GPU; 132 SMs and 50 MB L2 as H100 SXM",
}

gpu {
  name = "H200", aliases = { "H200 SXM", "H200-SXM" },
  vendor = "NVIDIA", arch = "sm_90",
  compute_units = 132, warp_size = 32, shared_per_block = 48 * KiB,
  shared_per_block_optin = 227 * KiB,
  l2_bytes = 50 * MiB, mem_bytes = 141 * GiB, peak_bw_gbs = 4800,
  source = "NVIDIA H200 Tensor Core GPU data sheet: 141 GB HBM3e, 4.8 TB/s; GH100 with 132 SMs and 50 MB L2 as H100 SXM",
  note = "the driver's name 'NVIDIA H200 NVL' also matches (same memory and bandwidth)",
}
