"""Short captions for the 10 Fashion-MNIST classes: the text side of the prompt-driven model
(train_janus.py) and the corpus of its byte-level BPE tokenizer (train_bpe.py).

Each class has names, synonyms and paraphrases, lower and mixed case, with and without
articles. A few paraphrases per class are held out (TEST_CAPTIONS): training never sees them,
the card's held-out cross-entropy and class accuracy are measured with them.

  train_pairs()        [(caption, class)] of the training captions
  test_pairs()         [(caption, class)] of the held-out captions
  eval_prompts(n)      n held-out prompts per class, cycling: [(caption, class)]
  canonical_prompt(c)  the plain class name ("ankle boot"), used for the samples grid
"""
import random

# index = Fashion-MNIST label (common.FMNIST_CLASSES)
TRAIN_CAPTIONS = [
    # 0 T-shirt/top
    ["t-shirt", "a t-shirt", "T-shirt", "a T-shirt", "tshirt", "a tshirt", "tee", "a tee",
     "a tee shirt", "tee shirt", "top", "a top", "T-shirt/top", "a short sleeve shirt",
     "a short-sleeved top", "a plain t-shirt", "a cotton tee", "a crew neck t-shirt",
     "a casual top", "t shirt", "a T-shirt or top", "a white t-shirt", "A t-shirt",
     "a summer top", "an undershirt", "a tank top", "a sleeveless top", "a simple tee"],
    # 1 Trouser
    ["trousers", "a pair of trousers", "Trouser", "trouser", "pants", "a pair of pants",
     "jeans", "a pair of jeans", "Jeans", "slacks", "long pants", "leggings",
     "a pair of leggings", "denim jeans", "Trousers", "chinos", "sweatpants",
     "a pair of slacks", "straight leg trousers", "dress pants", "some trousers",
     "blue jeans", "work trousers", "a pair of long trousers"],
    # 2 Pullover
    ["pullover", "a pullover", "Pullover", "sweater", "a sweater", "jumper", "a jumper",
     "Sweater", "a knit sweater", "a wool sweater", "a woolly jumper", "sweatshirt",
     "a sweatshirt", "a long sleeve sweater", "a knitted pullover", "a crew neck sweater",
     "a warm jumper", "a winter sweater", "knitwear", "a long-sleeved top", "A jumper",
     "a cosy pullover", "a hoodie"],
    # 3 Dress
    ["dress", "a dress", "Dress", "A dress", "a summer dress", "a long dress", "a short dress",
     "gown", "a gown", "an evening dress", "a sundress", "a maxi dress", "a mini dress",
     "a sleeveless dress", "a party dress", "a cocktail dress", "frock", "a frock",
     "a one-piece dress", "a casual dress", "a woman's dress", "a flowing dress",
     "a simple dress"],
    # 4 Coat
    ["coat", "a coat", "Coat", "A coat", "jacket", "a jacket", "Jacket", "a winter coat",
     "an overcoat", "overcoat", "a long coat", "a parka", "a raincoat", "a trench coat",
     "outerwear", "a warm coat", "a zip-up jacket", "a wool coat", "a puffer jacket",
     "a coat with long sleeves", "a heavy jacket", "an anorak", "a blazer"],
    # 5 Sandal
    ["sandal", "a sandal", "Sandal", "sandals", "a pair of sandals", "Sandals",
     "an open-toe sandal", "a summer sandal", "flip flop", "a flip-flop", "flip flops",
     "a strappy sandal", "a heeled sandal", "a beach sandal", "open shoes", "a slipper",
     "slippers", "a high heel sandal", "a sandal with straps", "a slide", "an open shoe",
     "a light summer shoe"],
    # 6 Shirt
    ["shirt", "a shirt", "Shirt", "A shirt", "a button-up shirt", "a button down shirt",
     "a dress shirt", "a blouse", "blouse", "a collared shirt", "a long sleeve shirt",
     "a flannel shirt", "a work shirt", "an oxford shirt", "a checked shirt",
     "a shirt with buttons", "a formal shirt", "a casual shirt", "a linen shirt",
     "a denim shirt", "a plaid shirt", "a shirt with a collar"],
    # 7 Sneaker
    ["sneaker", "a sneaker", "Sneaker", "sneakers", "a pair of sneakers", "Sneakers",
     "trainer", "a trainer", "trainers", "a running shoe", "running shoes",
     "a sports shoe", "a tennis shoe", "a canvas shoe", "a low-top sneaker",
     "a gym shoe", "athletic shoes", "a skate shoe", "a casual shoe", "a white sneaker",
     "kicks", "a lace-up sneaker"],
    # 8 Bag
    ["bag", "a bag", "Bag", "A bag", "handbag", "a handbag", "Handbag", "purse", "a purse",
     "a tote bag", "a shoulder bag", "a leather bag", "a shopping bag", "a backpack",
     "a clutch", "a satchel", "a carry bag", "a bag with a handle", "a messenger bag",
     "a small bag", "a bag with straps", "a tote"],
    # 9 Ankle boot
    ["ankle boot", "an ankle boot", "Ankle boot", "Ankle Boot", "ankle boots",
     "a pair of ankle boots", "boot", "a boot", "boots", "a short leather boot",
     "a short boot", "a leather boot", "a chelsea boot", "Chelsea boots", "a bootie",
     "a heeled boot", "a winter boot", "an ankle-high boot", "a suede boot",
     "a boot with a heel", "a lace-up boot", "a low boot", "a zip boot"],
]

# held out: paraphrases training never sees (some words are new to the tokenizer's merges too)
TEST_CAPTIONS = [
    ["a short-sleeve tee", "a basic T-shirt", "a graphic tee", "a cotton top"],
    ["a pair of denim trousers", "long trousers", "Pants", "a pair of chinos"],
    ["a knitted sweater", "a woollen pullover", "a cardigan", "a thick jumper"],
    ["an elegant dress", "a long gown", "a dress for a party", "Sundress"],
    ["a long winter jacket", "a padded coat", "a rain jacket", "a warm overcoat"],
    ["a strappy summer sandal", "beach sandals", "a pair of flip-flops", "an open sandal"],
    ["a button-down blouse", "a collared work shirt", "a long-sleeved shirt", "Blouse"],
    ["a pair of trainers", "a running sneaker", "a sporty shoe", "tennis shoes"],
    ["a leather handbag", "a large tote", "a shoulder purse", "Purse"],
    ["a short ankle boot", "a pair of leather boots", "a Chelsea boot", "a suede ankle boot"],
]

CANONICAL = ["t-shirt", "trousers", "pullover", "dress", "coat", "sandal", "shirt", "sneaker",
             "bag", "ankle boot"]

# a little general English for the tokenizer's corpus, so words outside the captions still
# get sensible merges (anything at all still encodes: byte-level BPE falls back to bytes)
GENERAL_ENGLISH = """\
A photo of a person wearing clothes. The image shows a piece of clothing on a plain
background. This is a picture of a small object in black and white. Draw an item of fashion:
something to wear on the feet, the legs or the upper body. It is made of cotton, wool, leather,
denim or canvas, and it has sleeves, a collar, buttons, straps, laces or a zip. The quick brown
fox jumps over the lazy dog. Generate an image of the following, centered, in grayscale, with
a dark background. What would you like to see? Please make it simple and clear. There are
many kinds of shoes, shirts and bags in the world; each one looks a little different. Light,
dark, black, white, gray, red, blue, green, big, small, long, short, new, old, soft, warm.
Numbers 0 1 2 3 4 5 6 7 8 9 10 100. Hello, how are you? I'm fine, thanks. We're here. They've
gone. You'll see. It's a nice day.
"""


def train_pairs():
    return [(c, k) for k, caps in enumerate(TRAIN_CAPTIONS) for c in caps]


def test_pairs():
    return [(c, k) for k, caps in enumerate(TEST_CAPTIONS) for c in caps]


def eval_prompts(per_class):
    """per_class held-out prompts for each class (cycling through that class's list), class
    order 0..9, as [(caption, class)]."""
    return [(TEST_CAPTIONS[k][i % len(TEST_CAPTIONS[k])], k)
            for k in range(10) for i in range(per_class)]


def canonical_prompt(k):
    return CANONICAL[k]


def random_caption(k, rng, split="train"):
    caps = TRAIN_CAPTIONS if split == "train" else TEST_CAPTIONS
    return caps[k][rng.randrange(len(caps[k]))]


def corpus():
    """Text the BPE tokenizer is trained on: every caption (train and held-out: the tokenizer
    is part of the model's input pipeline, not of what the model learned) plus a little
    general English."""
    lines = [c for caps in TRAIN_CAPTIONS + TEST_CAPTIONS for c in caps]
    return lines + GENERAL_ENGLISH.split("\n")


def _check():
    train = train_pairs()
    test = test_pairs()
    assert not {c for c, _ in train} & {c for c, _ in test}, "held-out caption in training set"
    for k in range(10):
        n = len(TRAIN_CAPTIONS[k])
        assert 20 <= n <= 40, (k, n)
        assert len(set(TRAIN_CAPTIONS[k])) == n, k
    # no caption names two classes
    seen = {}
    for c, k in train + test:
        assert seen.setdefault(c.lower(), k) == k, c
    return len(train), len(test)


if __name__ == "__main__":
    n_train, n_test = _check()
    print(f"{n_train} training captions, {n_test} held out")
    rng = random.Random(0)
    for k in range(10):
        print(k, CANONICAL[k], "|", random_caption(k, rng), "|", ", ".join(TEST_CAPTIONS[k]))
