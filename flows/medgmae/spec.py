"""medgmae's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    16, "medgmae", "MedGMAE: masked autoencoding that reconstructs 3D Gaussians instead of voxels", "16-medgmae.md"
)

L = Layout("medgmae", code=("common",))
DATA, PRETRAIN, FINETUNE, RECON = L.out("data"), L.out("pretrain"), L.out("finetune"), L.out("recon")
_C = "components/medgmae"

STAGES = (
    L.stage(
        "data",
        code=(f"{_C}/volumes.py", f"{_C}/sources.py", "components/data/mni152.py", "components/data/validate.py"),
        params=("data",),
        writes=(DATA,),
        summary="MNI152 (2 mm) 3-D crops with GM/WM/other labels from disjoint z slabs, MONAI augmentation, "
        "ellipsoid phantoms for the pretraining pool; GX checks (no test voxel in a training crop, label shares)",
    ),
    L.stage(
        "pretrain",
        code=(f"{_C}/model.py", f"{_C}/render.py", "components/models/vit_blocks.py"),
        reads=(DATA,),
        params=("model", "pretrain", "resources"),
        writes=(PRETRAIN,),
        after=("data",),
        summary="MedGMAE (Gaussian decoder + dense renderer) and voxel MAE on the same encoder, 75% masking, "
        "loss on masked voxels only; masked-voxel loss before and after on test crops",
    ),
    L.stage(
        "finetune",
        code=(_C, "components/models/vit_blocks.py"),
        reads=(DATA, PRETRAIN),
        params=("model", "finetune", "resources"),
        writes=(FINETUNE,),
        after=("data", "pretrain"),
        summary="lr sweep on dev per init, then light UNETR fine-tuning from MedGMAE / voxel MAE / scratch at "
        "every label fraction x seed; MONAI Dice per test crop",
    ),
    L.stage(
        "recon",
        code=(f"{_C}/fit.py", f"{_C}/model.py", f"{_C}/render.py"),
        reads=(DATA, PRETRAIN),
        params=("model", "pretrain.seeds", "recon", "resources"),
        writes=(RECON,),
        after=("data", "pretrain"),
        summary="Gaussian fits of held-out crops from the pretrained decoder's prediction and from a random "
        "start: iterations to the target PSNR",
    ),
    L.report_stage(
        reads=(DATA, PRETRAIN, FINETUNE, RECON),
        params=("finetune", "recon.iters"),
        plots={
            "dice.csv": {"x": "fraction", "y": "dice", "template": "scatter", "color": "init"},
            "recon.csv": {"x": "volume", "y": "iters", "template": "scatter", "color": "start"},
        },
        after=("finetune", "recon"),
        summary="claims 1-3 with verdicts; Dice per label fraction with CIs, slices, fit iterations",
    ),
)
