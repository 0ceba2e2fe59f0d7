"""The shared GPU-name rules (`scrapers._gpus`), one class of wording at a time, on names that real
or fixture answers carry (the source is named beside each), and the replay census: every GPU row
the fixtures' parsers reject is rejected for a reason a reader can act on."""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import replace

import pytest

from gpucat import pipeline
from gpucat.schemas.records import Offer, Rejected
from gpucat.schemas.reference import GPU_FORM_DEFAULTS_CSV, GPU_MODELS_CSV, gpu_form_defaults, gpu_models, gpu_price_bounds
from gpucat.scrapers import all_sources, get_source
from gpucat.scrapers._gpus import MIB_GB, USABLE_HIGH, USABLE_LOW, fits_nameplate, is_stand_in, mapped, resolve, words
from gpucat.scrapers.normalize import normalize
from tests.conftest import FIXTURES
from tests.drift_checks import fixture_rates, replayed_pages
from tests.scrapers.helpers import FETCHED

TOGETHER = FIXTURES / "together" / "together" / "pricing.html"


def _resolve(name: str, provider: str = "acme", memory_gb: float | None = None) -> str:
    try:
        return resolve(name, provider=provider, memory_gb=memory_gb)
    except LookupError as exc:
        return f"rejected {exc}"


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("geforcertx3080-pcie-10gb", "RTX-3080"),  # TensorDock v0Name: vendor word glued on, form and memory inline
        ("nvidia_a16", "A16"),  # DigitalOcean gpu_info.model: underscores
        ("RTX 4000 SFF Ada", "RTX-4000-SFF-Ada"),  # Cudo gpuModel: the catalog's own family name
        ("A30", "A30"),  # Seeweb gpu_label
        ("Quadro RTX 5000", "Quadro-RTX-5000"),  # OVH blobs.technical.gpu.model
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),  # RunPod id (nvidia-smi's name): HBM3 is the SXM board's memory
        ("NVIDIA H100 PCIe", "H100-PCIe"),  # RunPod id
        ("Tesla V100-FHHL-16GB", "V100-FHHL-16GB"),  # RunPod's spelling of the catalog's own model
        ("Nvidia Tesla P100", "P100-PCIe-16GB"),  # GCP SKU description
        ("Tesla P4", "P4"),  # GCP SKU description
        ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"),  # "Generation" is a vendor word
        ("H100 SXM5 80GB", "H100-SXM"),  # Verda description
        ("AMD Instinct MI300X OAM", "MI300X"),
        ("InstinctMI250X", "MI250X"),  # vendor word run into the model
        ("RTX 4080S", "RTX-4080-SUPER"),  # Vast-style "S" for SUPER
        ("RTX 4070S Ti", "RTX-4070-Ti-SUPER"),  # ...with the words in another order than NVIDIA's
        ("RTX 6000Ada", "RTX-6000-Ada"),  # Vast gpu_name: the generation glued on
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-Server"),  # RunPod id: the catalog's own edition
        ("NVIDIA GB200 NVL72", "GB200"),
    ],
)
def test_vendor_description_grammar(name, model):
    assert _resolve(name) == model


@pytest.mark.parametrize(
    ("name", "model"),
    [
        # Near variants of what the real pages print (CoreWeave, Crusoe, Lambda, Nebius, Together): a
        # vendor or platform word, a form factor, a memory, marketing words, a GPU count before the name.
        ("NVIDIA HGX H100", "H100-SXM"),
        ("NVIDIA HGX H100 80GB", "H100-SXM"),
        ("NVIDIA DGX B200", "B200"),  # a DGX system carries SXM modules
        ("B200 SXM6", "B200"),
        ("NVIDIA HGX B300", "B300"),
        ("NVIDIA Blackwell Ultra B300", "B300"),
        ("NVIDIA GB300 NVL72", "GB300"),
        ("NVIDIA GH200 Grace Hopper Superchip", "GH200"),
        ("NVIDIA H200 NVL", "H200-NVL"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("AMD Instinct MI300X Accelerator", "MI300X"),
        ("AMD MI355X", "MI355X"),
        ("AMD Instinct MI325X", "MI325X"),
        ("NVIDIA L40S GPU", "L40S"),
        ("L40S 48GB", "L40S"),
        ("A100 80GB PCIe", "A100-PCIe-80GB"),
        ("A100 40GB SXM4", "A100-SXM4-40GB"),
        ("8x NVIDIA H100 SXM", "H100-SXM"),
        ("NVIDIA\u00a0H100\u00a0SXM5\u00a080GB", "H100-SXM"),  # non-breaking spaces
        ("nvidia   h100   sxm5", "H100-SXM"),
        ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB"),  # nvidia-smi spellings
        ("Tesla V100-PCIE-32GB", "V100-PCIe-32GB"),
        ("Tesla P100-PCIE-16GB", "P100-PCIe-16GB"),
        # RTX PRO 6000 Blackwell editions as NVIDIA names them; the Workstation Edition is the catalog's standard board
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000"),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX-PRO-6000-Max-Q"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-Server"),
        ("RTX PRO 6000 Blackwell", "RTX-PRO-6000-AnyEdition"),  # no edition said
        ("NVIDIA Quadro RTX 6000", "Quadro-RTX-6000"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"),
        ("NVIDIA L40S with Intel CPU", "L40S"),  # Nebius: the host named after "with"
        ("NVIDIA L40S with AMD EPYC CPU", "L40S"),
        ("NVIDIA HGX H200 with InfiniBand", "H200-SXM"),
    ],
)
def test_near_variants_of_real_page_names_map(name, model):
    assert _resolve(name) == model


def test_wording_splits_family_memory_form_and_memory_type():
    assert words("NVIDIA H100 80GB HBM3") == words("nvidia-h100-80gb-hbm3")
    said = words("geforcertx3080-pcie-10gb")
    assert (said.family, said.memory_gb, said.form_factor, said.memory_type) == ("rtx3080", 10.0, "PCIe", None)
    assert (words("A100 80 GiB").memory_gb, words("Tesla V100S PCIe 32GB").form_factor) == (80 * 1.073741824, "PCIe")


@pytest.mark.parametrize(
    ("name", "memory_gb", "expected"),
    [
        # A word of the canonical family left out: the stated memory must confirm one nameplate.
        ("RTX 6000 (24 GB)", None, "Quadro-RTX-6000"),  # Lambda instance-type description
        ("RTX 6000 24GB", None, "Quadro-RTX-6000"),  # Seeweb gpu_label
        ("NVIDIA A6000", 48.0, "RTX-A6000"),  # Lambda page plan with its VRAM/GPU column
        ("Q RTX 8000", 49152 * MIB_GB / 1000, "Quadro-RTX-8000"),  # Vast gpu_name with gpu_ram MiB
        ("RTX 5000", 16.0, "Quadro-RTX-5000"),  # 16 GB: not the 32 GB RTX 5000 Ada
        ("RTX5000", 16.0, "Quadro-RTX-5000"),  # Jarvislabs gpu_type: the line glued to the number
        ("RTX5000", 32.0, "RTX-5000-Ada"),
        ("RTX 6000", 48.0, "RTX-6000-Ada"),
        ("RTX 6000", None, "rejected ambiguous_gpu: 'RTX 6000' could be Quadro-RTX-6000, RTX-6000-Ada"),
        ("A6000", None, "rejected ambiguous_gpu: 'A6000' omits words of 'RTX A6000' and states no memory to confirm it"),
        ("RTX 6000", 32.0, "rejected memory_mismatch: 'RTX 6000' with 32 GB fits none of Quadro-RTX-6000, RTX-6000-Ada"),
    ],
)
def test_words_sellers_drop_need_the_memory_to_agree(name, memory_gb, expected):
    assert _resolve(name, memory_gb=memory_gb) == expected


@pytest.mark.parametrize(
    ("name", "mib", "expected"),
    [
        ("B300", 275040, "B300"),  # Vast, real capture (getcomputable/gpu-index b300_asc.json): 288.4 GB usable of 288
        ("B300", 262144, "B300"),  # 274.9 GB: 0.95 x the nameplate
        ("GTX 1080 Ti", 11264, "GTX-1080-Ti"),  # Vast fixture: 11.8 GB for an 11 GB card
        ("RTX 2080 Ti", 11264, "RTX-2080-Ti"),
        ("B300", 180000, "rejected memory_mismatch: 'B300' with 188.744 GB fits none of B300"),
        ("A100", 65536, "rejected memory_mismatch: 'A100' with 68.7195 GB fits none of A100-PCIe-40GB, A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB"),
        # Vast's own spellings (its gpu_name list as public clients copy it), with usable MiB
        ("RTX PRO 6000 WS", 97887, "RTX-PRO-6000"),  # WS: the Workstation Edition, the catalog's standard board
        ("RTX PRO 6000 S", 97887, "RTX-PRO-6000-Server"),  # S: the Server Edition
        ("RTX PRO 6000 Max-Q", 97887, "RTX-PRO-6000-Max-Q"),
        ("GH200 SXM", 97871, "GH200"),  # a superchip's GPU module, said "SXM"
        ("RTX 4060 Ti", 16380, "RTX-4060-Ti-16GB"),  # the 16 GB variant by its memory...
        ("RTX 4060 Ti", 8188, "RTX-4060-Ti"),  # ...and the 8 GB launch card
        ("RTX 5060 Ti", 16311, "RTX-5060-Ti-16GB"),
        ("RTX 3060", 8192, "RTX-3060-8GB"),
        ("RTX 3060", 12288, "RTX-3060"),
        ("Tesla V100", 32768, "V100-32GB-AnyForm"),
        ("H200 NVL", 143771, "H200-NVL"),
        ("H100 NVL", 95830, "H100-NVL"),
        # 80 GiB fits the 80 GB boards and the 94 GB NVL; being 80 GB exactly in GiB, it names the 80 GB ones
        ("H100", 81920, "H100-80GB-AnyForm"),
    ],
)
def test_usable_memory_in_mib_matches_by_range_not_by_equality(name, mib, expected):
    assert _resolve(name, "vast", mib * MIB_GB / 1000) == expected


@pytest.mark.parametrize(
    ("name", "mib", "expected"),
    [
        # Vast gpu_name spellings of older cards a broad /bundles/ answer sells (Vast's gpu_name list as
        # public clients copy it), with the nameplate in MiB; each maps to its own cited row
        ("Tesla P40", 24576, "P40"),
        ("Titan V", 12288, "Titan-V"),
        ("Titan Xp", 12288, "Titan-Xp"),
        ("GTX 1050", 2048, "GTX-1050"),
        ("GTX 1050", 3072, "GTX-1050-3GB"),  # the 3 GB variant by its memory
        ("GTX 1050 Ti", 4096, "GTX-1050-Ti"),
        ("GTX 1060", 6144, "GTX-1060"),
        ("GTX 1060", 3072, "GTX-1060-3GB"),
        ("GTX 1070", 8192, "GTX-1070"),
        ("GTX 1070 Ti", 8192, "GTX-1070-Ti"),
        ("GTX 1080", 8192, "GTX-1080"),
        ("GTX 1650", 4096, "GTX-1650"),
        ("GTX 1660", 6144, "GTX-1660"),
        ("GTX 1660 Ti", 6144, "GTX-1660-Ti"),
        ("RTX 2060", 6144, "RTX-2060"),
        ("RTX 2060S", 8192, "RTX-2060-SUPER"),
        ("RTX 2070", 8192, "RTX-2070"),
        ("RTX 2070S", 8192, "RTX-2070-SUPER"),
        ("RTX 2080", 8192, "RTX-2080"),
        ("Quadro P2000", 5120, "Quadro-P2000"),
        ("Quadro P4000", 8192, "Quadro-P4000"),
        ("Quadro P5000", 16384, "Quadro-P5000"),
        ("Quadro P6000", 24576, "Quadro-P6000"),
        ("Q RTX 4000", 8192, "Quadro-RTX-4000"),  # 8 GB: not the 20 GB RTX 4000 Ada
        ("RTX 4000Ada", 20475, "RTX-4000-Ada"),
        ("RTX 4090D", 24564, "RTX-4090D"),  # the China-market card, never taken for the RTX 4090
        ("RTX 4090", 24564, "RTX-4090"),
        ("A800 PCIE", 81920, "A800-PCIe-80GB"),  # Vast's spelling of the China-market A100
        ("A800 PCIE", 40960, "A800-PCIe-40GB"),
        ("A800", 81920, "rejected ambiguous_gpu: 'A800' could be A800-PCIe-80GB, A800-SXM4-80GB"),  # form unsaid, no stand-in
        ("L20", 49140, "L20"),
        # AMD's Instinct PCIe cards, as AMD names them
        ("AMD Instinct MI210", 65536, "MI210"),
        ("AMD Instinct MI100", 32768, "MI100"),
        # Vast's lone "S" after the number is the SUPER card, never the non-SUPER card of the same memory
        ("GTX 1660 S", 6144, "GTX-1660-SUPER"),
        ("GTX 1650 S", 4096, "GTX-1650-SUPER"),
        ("RTX 2080S", 8192, "RTX-2080-SUPER"),
        ("RTX 4060", 8188, "RTX-4060"),
        ("RTX 5060", 8151, "RTX-5060"),
        ("RTX PRO 6000 S", 97887, "RTX-PRO-6000-Server"),  # after "PRO 6000" the "S" is still the Server Edition
        ("GTX 1060", 4096, "rejected memory_mismatch: 'GTX 1060' with 4.29497 GB fits none of GTX-1060, GTX-1060-3GB"),
    ],
)
def test_vast_spellings_of_older_cards_map_to_their_rows(name, mib, expected):
    assert _resolve(name, "vast", mib * MIB_GB / 1000) == expected


@pytest.mark.parametrize(
    ("name", "mib", "expected"),
    [
        # Vast gpu_name spellings (vast-ai/vast-cli vastai/data/query.py, the GPU names of Vast's
        # gpulist.json) of cards that had no row, with the nameplate in MiB; each maps to its cited row
        ("H800 PCIE", 81559, "H800-PCIe"),  # 80 GB as an 80 GB H100 reports it
        ("H800 SXM", 81559, "H800-SXM"),
        ("H800", 81559, "rejected ambiguous_gpu: 'H800' could be H800-PCIe, H800-SXM"),  # form unsaid, no stand-in (as the A800)
        ("A100X", 81920, "A100X"),  # the converged card, never an A100 board
        ("RTX 3050", 8192, "RTX-3050"),
        ("RTX 3050", 6144, "RTX-3050-6GB"),  # the 6 GB card by its memory
        ("RTX 5880Ada", 49140, "RTX-5880-Ada"),
        ("CMP 50HX", 10240, "CMP-50HX"),
        ("InstinctMI50", 16384, "MI50"),  # "Instinct" glued on, as Vast writes it
        ("InstinctMI50", 32768, "MI50-32GB"),
        ("Radeon VII", 16384, "Radeon-VII"),
        ("RX 7900 XTX", 24576, "Radeon-RX-7900-XTX"),
        ("RX 7900 XT", 20480, "Radeon-RX-7900-XT"),  # not the XTX
        ("RX 7900 GRE", 16384, "Radeon-RX-7900-GRE"),
        ("RX 7800 XT", 16384, "Radeon-RX-7800-XT"),
        ("RX 7700 XT", 12288, "Radeon-RX-7700-XT"),
        ("RX 7600", 8192, "Radeon-RX-7600"),
        ("RX 6950 XT", 16384, "Radeon-RX-6950-XT"),
        ("RX 6900 XT", 16384, "Radeon-RX-6900-XT"),
        ("RX 6800 XT", 16384, "Radeon-RX-6800-XT"),
        ("RX 6800", 16384, "Radeon-RX-6800"),
        ("PRO W7900", 49152, "Radeon-PRO-W7900"),  # "Radeon" dropped, as Vast writes AMD's workstation cards
        ("PRO W7800", 32768, "Radeon-PRO-W7800"),
        ("PRO W7800", 49152, "Radeon-PRO-W7800-48GB"),  # the 48 GB board by its memory
        ("PRO W6800", 32768, "Radeon-PRO-W6800"),
        ("Pro V620", 32768, "Radeon-PRO-V620"),
        ("GTX TITAN X", 12288, "GTX-TITAN-X"),
        ("GTX 750 Ti", 2048, "GTX-750-Ti"),
        # Laptop parts are their own cards (the laptop RTX 4070 has 8 GB, the desktop card 12 GB)
        ("RTX 3060 laptop", 6144, "RTX-3060-Laptop"),
        ("RTX 3070 laptop", 8192, "RTX-3070-Laptop"),
        ("RTX 4060 laptop", 8188, "RTX-4060-Laptop"),
        ("RTX 4070 laptop", 8188, "RTX-4070-Laptop"),
        ("RTX 4080 laptop", 12282, "RTX-4080-Laptop"),
        ("RTX 4070", 12282, "RTX-4070"),  # the desktop card is still the desktop row
        # Left unmapped on purpose: "Titan X" is the Maxwell GTX TITAN X or the Pascal TITAN X (both
        # 12 GB), and neither "RTX 4090 Ti" nor "RTX 5090 Ti" is a card NVIDIA sells.
        ("Titan X", 12288, "rejected unknown_gpu: 'Titan X'"),
        ("RTX 4090 Ti", 24576, "rejected unknown_gpu: 'RTX 4090 Ti'"),
        ("RX 7900 XTX", 16384, "rejected memory_mismatch: 'RX 7900 XTX' with 17.1799 GB fits none of Radeon-RX-7900-XTX"),
    ],
)
def test_vast_spellings_of_cards_added_for_a_broad_answer_map_to_their_rows(name, mib, expected):
    assert _resolve(name, "vast", mib * MIB_GB / 1000) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # "Radeon" is AMD's line word, as "GeForce" is NVIDIA's: AMD's own names and Vast's shortened
        # ones reach the same row, and AWS's "Radeon Pro V520" still maps.
        ("AMD Radeon PRO W7900", "Radeon-PRO-W7900"),
        ("AMD Radeon RX 7900 XTX", "Radeon-RX-7900-XTX"),
        ("AMD Radeon VII", "Radeon-VII"),
        ("AMD Radeon Pro V520", "Radeon-Pro-V520"),
        ("AMD Instinct MI50", "MI50"),  # no memory said: the 16 GB launch card, never the 32 GB variant
        ("NVIDIA H800 PCIe 80GB", "H800-PCIe"),  # NVIDIA's board names (AI Enterprise docs)
        ("NVIDIA H800 SXM5 80GB", "H800-SXM"),
        ("NVIDIA RTX 5880 Ada Generation", "RTX-5880-Ada"),
    ],
)
def test_vendor_names_of_the_added_cards_map_like_vasts(name, expected):
    assert _resolve(name) == expected


@pytest.mark.parametrize(
    ("nameplate", "reported", "fits"),
    [(80, 80 * USABLE_LOW, True), (80, 80 * USABLE_HIGH, True), (80, 80 * USABLE_LOW - 0.01, False), (80, 80 * USABLE_HIGH + 0.01, False)],
)
def test_the_usable_range_is_closed_at_both_ends(nameplate, reported, fits):
    assert fits_nameplate(reported, nameplate) is fits


@pytest.mark.parametrize(
    ("name", "provider", "memory_gb", "expected"),
    [
        # A cited provider default settles the form factor the answer leaves out...
        ("H100", "jarvislabs", 80.0, "H100-SXM"),
        ("H200", "jarvislabs", 141.0, "H200-SXM"),
        ("Nvidia Tesla V100", "gcp", None, "V100-SXM2-16GB"),
        # ...and only for that provider and family; elsewhere the form factor stays unstated.
        ("H200", "vast-like", 141.0, "H200-141GB-AnyForm"),
        ("H100", "vast-like", 80.0, "H100-80GB-AnyForm"),
        # One special edition beside a standard board: the unnamed edition is the standard board.
        ("T4", "acme", None, "T4"),
        ("V100 PCIe 16GB", "acme", None, "V100-PCIe-16GB"),
    ],
)
def test_form_factor_defaults_apply_only_where_the_provider_documents_them(name, provider, memory_gb, expected):
    assert _resolve(name, provider, memory_gb) == expected


@pytest.mark.parametrize(
    ("name", "provider", "memory_gb", "expected"),
    [
        # No form factor said and no cited default: the family's stand-in for that memory.
        ("A100-80GB", "jarvislabs", 80.0, "A100-80GB-AnyForm"),  # Jarvislabs gpu_type with its vram
        ("Tesla V100 16GB", "verda", None, "V100-16GB-AnyForm"),  # Verda gpu.description
        ("V100", "cloudrift", 17179869184 / 1e9, "V100-16GB-AnyForm"),  # CloudRift brand_short with vram bytes
        ("A100 80GB", "seeweb", None, "A100-80GB-AnyForm"),  # Seeweb gpu_label
        ("H100", "ovh", 80.0, "H100-80GB-AnyForm"),  # OVH blobs.technical.gpu with memory.size
        ("Tesla V100", "ovh", 16.0, "V100-16GB-AnyForm"),  # the FHHL edition is not a candidate for a plain name
        ("V100 32GB", "acme", None, "V100-32GB-AnyForm"),
        ("Nvidia H200", "modal", None, "H200-141GB-AnyForm"),  # both H200 boards have 141 GB
        ("Nvidia A100, 40 GB", "modal", None, "A100-40GB-AnyForm"),  # Modal page label
        # No edition said where the editions share form factor and memory: the edition stand-in.
        ("RTX-PRO6000", "jarvislabs", 96.0, "RTX-PRO-6000-AnyEdition"),
        ("NVIDIA RTX PRO 6000 Blackwell", "acme", None, "RTX-PRO-6000-AnyEdition"),
        # A stated form factor or edition always wins over the stand-in...
        ("A100 80GB PCIe", "acme", None, "A100-PCIe-80GB"),
        ("NVIDIA A100-SXM4-80GB", "acme", None, "A100-SXM4-80GB"),
        ("H100 SXM5 80GB", "acme", None, "H100-SXM"),
        ("NVIDIA H200 NVL", "acme", None, "H200-NVL"),
        ("RTX PRO 6000 Server Edition", "acme", None, "RTX-PRO-6000-Server"),
        ("NVIDIA H100 80GB HBM3", "acme", None, "H100-SXM"),  # nvidia-smi's memory type names the board
        # ...and candidates of different memory are no stand-in's: the memory is what fit needs.
        ("H100", "acme", None, "rejected ambiguous_gpu: 'H100' could be H100-NVL, H100-PCIe, H100-SXM"),
        ("A100", "acme", None, "rejected ambiguous_gpu: 'A100' could be A100-PCIe-40GB, A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB"),
        ("V100", "acme", None, "rejected ambiguous_gpu: 'V100' could be V100-PCIe-16GB, V100-PCIe-32GB, V100-SXM2-16GB, V100-SXM2-32GB"),
        ("RTX 6000", "acme", None, "rejected ambiguous_gpu: 'RTX 6000' could be Quadro-RTX-6000, RTX-6000-Ada"),
        # A memory variant's row (RTX-4060-Ti-16GB) is never assumed when no memory is said: the launch card is.
        ("RTX 4060 Ti", "acme", None, "RTX-4060-Ti"),
    ],
)
def test_an_unstated_form_factor_maps_to_the_stand_in_never_to_a_guess(name, provider, memory_gb, expected):
    assert _resolve(name, provider, memory_gb) == expected


def _number(text: str) -> float | None:
    return float(text) if text else None


def test_every_stand_in_shares_the_memory_of_what_it_stands_for_and_flatters_none_of_it():
    """A stand-in's memory is its candidates' own (fit is exact); its bandwidth, TFLOPS and NVLink are
    never above any candidate's sourced figure and its capability flags never claim what one candidate lacks (cost
    is conservative); an `-AnyForm` row claims no form factor, an `-AnyEdition` row its family's one."""
    with GPU_MODELS_CSV.open(newline="", encoding="utf-8") as fh:
        rows = {r["gpu_model"]: r for r in csv.DictReader(fh)}
    stand_ins = [m for m in gpu_models().values() if is_stand_in(m)]
    assert {m.gpu_model for m in stand_ins} == {
        "H100-80GB-AnyForm", "H200-141GB-AnyForm", "A100-80GB-AnyForm", "A100-40GB-AnyForm",
        "V100-16GB-AnyForm", "V100-32GB-AnyForm", "RTX-PRO-6000-AnyEdition",
    }
    for stand_in in stand_ins:
        covered = [
            m for m in gpu_models().values()
            if not is_stand_in(m) and m.family == stand_in.family and m.memory_gb == stand_in.memory_gb
        ]
        assert len(covered) >= 2, stand_in
        forms = {m.form_factor for m in covered}
        assert stand_in.form_factor == ("Unstated" if stand_in.gpu_model.endswith("-AnyForm") else forms.pop()), stand_in
        mine = rows[stand_in.gpu_model]
        for column in ("memory_bandwidth_gbps", "bf16_tflops", "fp16_tflops", "nvlink_gbps"):
            theirs = [_number(rows[m.gpu_model][column]) for m in covered]
            if _number(mine[column]) is not None:
                assert all(t is None or _number(mine[column]) <= t for t in theirs), (stand_in.gpu_model, column)  # None: unsourced
        for flag in ("bf16", "fp8", "int8", "int4", "bnb_4bit"):
            assert mine[flag] == "false" or all(rows[m.gpu_model][flag] == "true" for m in covered), (stand_in.gpu_model, flag)
        assert mine["nvlink_gbps"] == "" and "stand-in" in mine["notes"], stand_in.gpu_model
        # its price bounds admit every price one of the boards it stands for may charge
        bound = gpu_price_bounds()[stand_in.gpu_model]
        for m in covered:
            if m.gpu_model in gpu_price_bounds():
                theirs = gpu_price_bounds()[m.gpu_model]
                assert bound.min_usd_per_gpu_hour <= theirs.min_usd_per_gpu_hour and bound.max_usd_per_gpu_hour >= theirs.max_usd_per_gpu_hour, m.gpu_model


def test_every_form_default_names_a_model_of_its_family_and_cites_the_provider():
    with GPU_FORM_DEFAULTS_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(gpu_form_defaults()) == len(rows)  # one row per provider and family
    for row in rows:
        model = gpu_models()[row["gpu_model"]]
        assert words(model.family).family == row["family_key"], row
        assert row["provider"] in all_sources_providers() and len(row["source"]) > 40, row


def all_sources_providers() -> set[str]:
    return {s.provider for s in all_sources().values()}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb",  # RunPod gpuTypes id
            "rejected mig_slice: 'NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb' is a MIG slice of one GPU, not a whole GPU; gpu_models has no MIG profiles",
        ),
        ("A100 MIG 3g.40gb", "rejected mig_slice: 'A100 MIG 3g.40gb' is a MIG slice of one GPU, not a whole GPU; gpu_models has no MIG profiles"),
        ("H100 1g.10gb", "rejected mig_slice: 'H100 1g.10gb' is a MIG slice of one GPU, not a whole GPU; gpu_models has no MIG profiles"),
    ],
)
def test_a_mig_slice_is_never_counted_as_the_whole_gpu(name, expected):
    assert _resolve(name, memory_gb=24.0) == expected


@pytest.mark.parametrize("name", ["Tenstorrent Grayskull e150", "tenstorrent wormhole n300"])  # Seeweb gpu_label
def test_a_non_gpu_accelerator_is_rejected_as_such_not_as_unknown(name):
    assert _resolve(name) == f"rejected not_a_gpu: {name!r} is a Tenstorrent accelerator, which gpu_models does not carry"


@pytest.mark.parametrize(("name", "expected"), [("Quantum Q1", "rejected unknown_gpu: 'Quantum Q1'"), ("", "rejected unknown_gpu: ''")])
def test_unknown_names_stay_unknown(name, expected):
    assert _resolve(name) == expected


@pytest.mark.parametrize(
    ("gpu_name", "expected"),
    [
        ("NVIDIA H200 NVL", "H200-NVL"),
        ("NVIDIA GB200 NVL72", "GB200"),  # the rack's NVLink domain is no form factor
        ("NVIDIA H200", "H200-141GB-AnyForm"),
        ("NVIDIA H100", "ambiguous_gpu: 'NVIDIA H100' could be H100-NVL, H100-PCIe, H100-SXM"),
        ("NVIDIA Z9", "unknown_gpu: 'NVIDIA Z9'"),
    ],
)
def test_normalization_sends_a_name_no_table_mapped_through_the_rules(gpu_name, expected):
    """Any parser (the HTML pages' included) that leaves `gpu_model` empty gets the rules' answer."""
    parsed = [i for i in get_source("together").parse(io.BytesIO(TOGETHER.read_bytes()), url="https://www.together.ai/pricing", fetched_at=FETCHED) if isinstance(i, Offer)]
    [item] = normalize([replace(parsed[0], gpu_name=gpu_name, gpu_model=None)])
    assert (item.reasons[0] if isinstance(item, Rejected) else item.gpu_model) == expected


def test_a_reviewed_table_wins_and_the_rules_answer_the_rest_with_their_reason():
    table = {"a100 80gb": "A100-SXM4-80GB"}
    assert mapped(table, "A100 80GB", key="a100 80gb", provider="seeweb") == ("A100-SXM4-80GB", None)
    assert mapped(table, "A30", provider="seeweb") == ("A30", None)
    assert mapped(table, "Tenstorrent Grayskull e150", provider="seeweb") == (
        None,
        "not_a_gpu: 'Tenstorrent Grayskull e150' is a Tenstorrent accelerator, which gpu_models does not carry",
    )


# Every GPU row the fixtures' parsers reject for its GPU, by source and reason. A name the rules
# newly map leaves this list; a regression that rejects a mapped GPU joins it.
GPU_REASONS = ("unknown_gpu", "ambiguous_gpu", "ambiguous_form_factor", "memory_mismatch", "mig_slice", "not_a_gpu", "unknown_gpu_count")
EXPECTED_GPU_REJECTIONS = {
    "azure-retail": {"unknown_gpu_count: 'Standard_NC24lds_xl_RTXPRO6000BSE_v6'": 1},
    "oci-pricelist": {
        "unknown_gpu: 'OCI - Compute - GPU - H100T'": 1,
        "unknown_gpu: 'Compute - Bare Metal GPU Standard - X7'": 1,
        "unknown_gpu: 'Compute - Virtual Machine GPU Standard - X7'": 1,
        "unknown_gpu: 'Compute - GPU Standard - V2'": 1,
        "unknown_gpu: 'Compute - GPU - E3'": 1,
    },
    "runpod-graphql": {"mig_slice: 'NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb' is a MIG slice of one GPU, not a whole GPU; gpu_models has no MIG profiles": 1},
    "seeweb": {"not_a_gpu: 'Tenstorrent Grayskull e150' is a Tenstorrent accelerator, which gpu_models does not carry": 1},
    "vast-bundles": {"memory_mismatch: 65536 MiB fits no 'A100 SXM4' nameplate (40 GB, 80 GB)": 1},
}


def gpu_rejections() -> dict[str, dict[str, int]]:
    """Per offer source, the replayed fixtures' rejections whose reason is about the GPU."""
    rates = fixture_rates(FIXTURES)
    found: dict[str, dict[str, int]] = {}
    for name, source in sorted(all_sources().items()):
        if "offers" not in source.tables or not (FIXTURES / source.provider / source.name).is_dir():
            continue
        items = pipeline.parse_source(source, replayed_pages(source, FIXTURES), rates)
        reasons = Counter(x for i in items if isinstance(i, Rejected) for x in i.reasons if x.startswith(GPU_REASONS))
        if reasons:
            found[name] = dict(reasons)
        assert any(isinstance(i, Offer) for i in items), name
    return found


def test_on_the_replay_every_gpu_rejection_has_its_reason():
    assert gpu_rejections() == EXPECTED_GPU_REJECTIONS
