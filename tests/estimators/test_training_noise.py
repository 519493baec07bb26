"""sklmn.callbacks.TrainingNoise: fresh Gaussian input noise, training only."""

import types
import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sklmn.callbacks import TrainingNoise
from sklmn.estimators import LMNClassifier


def _batch(seed=0):
    rng = np.random.RandomState(seed)
    X = torch.from_numpy(rng.randn(40, 30, 3))
    lengths = torch.from_numpy(rng.randint(10, 31, 40))
    return {"X": X, "lengths": lengths}, torch.zeros(40)


def _started(std=0.6, random_state=None, shuffle_seed=0):
    cb = TrainingNoise(std=std, random_state=random_state).initialize()
    cb.on_train_begin(types.SimpleNamespace(shuffle_seed=shuffle_seed))
    return cb


def _noise(cb, training=True, seed=0):
    batch = _batch(seed)
    clean = batch[0]["X"]
    cb.on_batch_begin(None, batch=batch, training=training)
    return (batch[0]["X"] - clean).numpy(), batch[0]["lengths"].numpy(), clean


def test_noise_has_the_std_on_valid_steps_and_spares_padding():
    noise, lengths, clean = _noise(_started(std=0.6))
    valid = np.arange(30)[None, :] < lengths[:, None]
    assert np.std(noise[valid]) == pytest.approx(0.6, rel=0.05)
    assert abs(np.mean(noise[valid])) < 0.05
    assert np.all(noise[~valid] == 0)
    # the dataset's tensor is not modified: the batch gets a new tensor
    np.testing.assert_array_equal(clean.numpy(), _batch(0)[0]["X"].numpy())


def test_no_noise_outside_training_or_with_zero_std():
    noise, _, _ = _noise(_started(std=0.6), training=False)
    assert np.all(noise == 0)
    noise, _, _ = _noise(_started(std=0.0), training=True)
    assert np.all(noise == 0)


def test_fresh_draw_every_batch_reproducible_by_seed():
    cb = _started(random_state=3)
    first, _, _ = _noise(cb)
    second, _, _ = _noise(cb)
    assert not np.allclose(first, second)
    again, _, _ = _noise(_started(random_state=3))
    np.testing.assert_allclose(again, first)
    # without a seed of its own: the net's seed decides
    a, _, _ = _noise(_started(shuffle_seed=5))
    b, _, _ = _noise(_started(shuffle_seed=5))
    c, _, _ = _noise(_started(shuffle_seed=6))
    np.testing.assert_allclose(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize(
    "params, bad",
    [
        ({"std": -0.5}, "-0.5"),
        ({"std": float("nan")}, "nan"),
        ({"std": "big"}, "'big'"),
        ({"random_state": 1.5}, "1.5"),
        # torch's generator refused it with "Overflow when unpacking long long"
        ({"random_state": 2**70}, str(2**70)),
        ({"std": np.bool_(True)}, "True"),
    ],
)
def test_invalid_parameters_are_named(params, bad):
    with pytest.raises(ValueError, match=bad):
        TrainingNoise(**params).initialize()


def test_numpy_scalars_are_accepted():
    # np.float32 / np.int64 (a parameter grid's values) were refused
    expected, _, _ = _noise(_started(std=0.5, random_state=3))
    got, _, _ = _noise(_started(std=np.float32(0.5), random_state=np.int64(3)))
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def _fit(noise, X, y):
    callbacks = None if noise is None else [("noise", TrainingNoise(std=noise))]
    clf = LMNClassifier(
        hidden_size=4,
        memory_size=4,
        max_iter=3,
        pretrainer=None,
        early_stopping=True,
        n_iter_no_change=10,
        callbacks=callbacks,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y)


def test_estimator_trains_on_noisy_inputs_and_validates_on_clean_ones():
    rng = np.random.RandomState(0)
    X, y = rng.randn(40, 6, 2), rng.randint(0, 2, 40)
    plain, noisy, noisy_again = _fit(None, X, y), _fit(0.6, X, y), _fit(0.6, X, y)
    # the noise changes the training (a different training loss) ...
    assert not np.allclose(plain.loss_curve_, noisy.loss_curve_)
    # ... reproducibly for a seeded estimator
    np.testing.assert_allclose(noisy.loss_curve_, noisy_again.loss_curve_)
    np.testing.assert_allclose(noisy.predict_proba(X), noisy_again.predict_proba(X))
    # the first validation loss is measured on clean data after the same
    # first updates: with std 0 the callback is a no-op
    zero = _fit(0.0, X, y)
    np.testing.assert_allclose(zero.loss_curve_, plain.loss_curve_)
    np.testing.assert_allclose(
        zero.validation_loss_curve_, plain.validation_loss_curve_
    )
