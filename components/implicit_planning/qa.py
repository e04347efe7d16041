"""QA case study: noun pairs whose articles differ ("an elephant" / "a whale"), three clue questions per noun.

The paper's 20 pairs are in its supplementary zip (not available offline); these 20 pairs are ours, written in the
same form (a question whose one-noun answer starts with "a" or "an"). The prompt is the card's 2-shot format:
two solved questions, then ``Q: {question}\\nA:``. The steering vector for A -> B is ``m * (mean over B's
training questions - mean over A's training questions)`` at the question's end; the test question is A's held-out
clue, and the article *flips* when the answer starts with B's article instead of A's.
"""

from __future__ import annotations

from pathlib import Path

from components.errors import DataError
from components.io import read_json

TWO_SHOT = (
    "Q: What do you call a young cat?\nA: A kitten\n\nQ: What vehicle with wings flies passengers?\nA: An airplane\n\n"
)
PROMPT = TWO_SHOT + "Q: {question}\nA:"

# (noun, article, clue questions); pairs are consecutive entries (an-noun, a-noun)
NOUNS: tuple[tuple[str, str, tuple[str, str, str]], ...] = (
    (
        "elephant",
        "an",
        (
            "What large grey animal has a trunk?",
            "Which animal has big ears and ivory tusks?",
            "What is the largest land animal in Africa?",
        ),
    ),
    (
        "whale",
        "a",
        (
            "What huge sea mammal breathes through a blowhole?",
            "What is the largest animal in the ocean?",
            "Which giant mammal sings songs under the sea?",
        ),
    ),
    (
        "owl",
        "an",
        (
            "What bird hoots at night?",
            "Which bird can turn its head almost all the way around?",
            "What wise night bird has big round eyes?",
        ),
    ),
    (
        "parrot",
        "a",
        (
            "What colourful bird can copy human speech?",
            "Which bird is famous for talking?",
            "What bright tropical bird sits on a pirate's shoulder?",
        ),
    ),
    (
        "apple",
        "an",
        (
            "What red or green fruit keeps the doctor away?",
            "What fruit fell on Newton's head?",
            "What crunchy fruit grows in orchards and makes cider?",
        ),
    ),
    (
        "banana",
        "a",
        (
            "What long yellow fruit do monkeys love?",
            "What curved fruit do you peel before eating?",
            "What yellow fruit grows in bunches?",
        ),
    ),
    (
        "umbrella",
        "an",
        (
            "What do you open over your head when it rains?",
            "What keeps you dry in a storm?",
            "What folding thing with a handle protects you from rain?",
        ),
    ),
    (
        "raincoat",
        "a",
        (
            "What waterproof jacket do you wear in the rain?",
            "What coat keeps you dry in a shower?",
            "What do you put on over your clothes when it pours?",
        ),
    ),
    (
        "island",
        "an",
        (
            "What is a piece of land surrounded by water?",
            "Where might a shipwrecked sailor be stranded?",
            "What do you call land in the middle of the sea?",
        ),
    ),
    (
        "mountain",
        "a",
        (
            "What very tall landform has a peak?",
            "What do climbers climb to reach a summit?",
            "What high rocky place can have snow on top?",
        ),
    ),
    (
        "orange",
        "an",
        (
            "What round citrus fruit shares its name with a colour?",
            "What fruit is squeezed for breakfast juice?",
            "What citrus fruit has a thick peel and segments?",
        ),
    ),
    (
        "lemon",
        "a",
        (
            "What sour yellow citrus fruit makes lemonade?",
            "What fruit is so sour it makes you pucker?",
            "What yellow fruit do you squeeze over fish?",
        ),
    ),
    (
        "egg",
        "an",
        ("What does a hen lay?", "What has a shell, a white and a yolk?", "What do you crack to make an omelette?"),
    ),
    (
        "cookie",
        "a",
        (
            "What sweet baked treat goes with milk?",
            "What small sweet biscuit has chocolate chips?",
            "What treat is kept in a jar on the kitchen counter?",
        ),
    ),
    (
        "ant",
        "an",
        (
            "What tiny insect lives in a colony and carries crumbs?",
            "What small insect builds hills?",
            "What insect works hard all summer in the fable?",
        ),
    ),
    (
        "bee",
        "a",
        ("What insect makes honey?", "What buzzing insect lives in a hive?", "What striped insect can sting you?"),
    ),
    (
        "octopus",
        "an",
        (
            "What sea creature has eight arms?",
            "What animal squirts ink to escape?",
            "What soft sea animal can squeeze through tiny holes?",
        ),
    ),
    (
        "shark",
        "a",
        (
            "What fish has many sharp teeth and a fin above water?",
            "What predator of the sea is in the film Jaws?",
            "What large fish hunts by smelling blood?",
        ),
    ),
    (
        "oven",
        "an",
        (
            "What kitchen appliance do you bake bread in?",
            "Where do you roast a turkey?",
            "What hot box in the kitchen bakes cakes?",
        ),
    ),
    (
        "fridge",
        "a",
        (
            "What kitchen appliance keeps food cold?",
            "Where do you keep the milk cold?",
            "What cold cupboard hums in the kitchen?",
        ),
    ),
    (
        "anchor",
        "an",
        (
            "What heavy thing is dropped to keep a ship in place?",
            "What holds a boat still at sea?",
            "What hooked iron weight hangs from a ship's chain?",
        ),
    ),
    (
        "sail",
        "a",
        (
            "What sheet of cloth catches the wind to move a boat?",
            "What makes a sailboat go?",
            "What does a sailor raise on the mast?",
        ),
    ),
    (
        "arrow",
        "an",
        (
            "What does an archer shoot from a bow?",
            "What pointed stick has feathers at one end?",
            "What do you aim at a target with a bow?",
        ),
    ),
    (
        "spear",
        "a",
        (
            "What long pole with a sharp point is thrown at prey?",
            "What weapon did hunters throw at mammoths?",
            "What pointed shaft does a fisherman use to stab fish?",
        ),
    ),
    (
        "eagle",
        "an",
        (
            "What large bird of prey is a symbol of America?",
            "What bird has sharp talons and soars high?",
            "What hunting bird builds a huge nest on a cliff?",
        ),
    ),
    (
        "penguin",
        "a",
        (
            "What bird cannot fly but swims in icy water?",
            "What black and white bird lives in Antarctica?",
            "What bird waddles on the ice?",
        ),
    ),
    (
        "igloo",
        "an",
        (
            "What house is built from blocks of snow?",
            "What dome of ice do Arctic hunters shelter in?",
            "What snow hut keeps people warm in the Arctic?",
        ),
    ),
    (
        "tent",
        "a",
        (
            "What do campers sleep in?",
            "What shelter do you pitch with poles and pegs?",
            "What fabric shelter do you put up at a campsite?",
        ),
    ),
    (
        "onion",
        "an",
        (
            "What vegetable makes you cry when you cut it?",
            "What layered bulb is used in soups?",
            "What vegetable has papery skin and many layers?",
        ),
    ),
    (
        "carrot",
        "a",
        (
            "What orange vegetable do rabbits love?",
            "What long orange root is good for your eyes?",
            "What vegetable is used as a snowman's nose?",
        ),
    ),
    (
        "iceberg",
        "an",
        (
            "What huge floating chunk of ice sank the Titanic?",
            "What is mostly hidden under the sea surface?",
            "What giant block of ice floats in the ocean?",
        ),
    ),
    ("volcano", "a", ("What mountain erupts with lava?", "What spews ash and molten rock?", "What destroyed Pompeii?")),
    (
        "envelope",
        "an",
        (
            "What do you put a letter in before mailing it?",
            "What paper pocket holds a letter?",
            "What do you lick and seal before sending a card?",
        ),
    ),
    (
        "stamp",
        "a",
        (
            "What do you stick on a letter to pay for postage?",
            "What small sticker goes in the corner of a letter?",
            "What do collectors put in albums from post offices?",
        ),
    ),
    (
        "ear",
        "an",
        ("What body part do you hear with?", "Where do you wear an earring?", "What organ helps you listen?"),
    ),
    (
        "nose",
        "a",
        (
            "What body part do you smell with?",
            "What is in the middle of your face and sneezes?",
            "What grows long when Pinocchio lies?",
        ),
    ),
    (
        "astronaut",
        "an",
        (
            "Who travels into space in a rocket?",
            "Who walked on the Moon in a space suit?",
            "Who lives on the space station?",
        ),
    ),
    ("pilot", "a", ("Who flies a plane?", "Who sits in the cockpit?", "Who lands the aircraft at the airport?")),
    (
        "engine",
        "an",
        (
            "What part of a car makes it go?",
            "What machine burns fuel to make power?",
            "What roars under the bonnet of a car?",
        ),
    ),
    (
        "wheel",
        "a",
        (
            "What round part of a car touches the road?",
            "What round thing turns on an axle?",
            "What does a bicycle have two of?",
        ),
    ),
)


def pairs(nouns=NOUNS) -> list[tuple[dict, dict]]:
    """``[(a, b), ...]``: consecutive entries as pairs, each ``{"noun", "article", "questions"}``."""
    rows = [{"noun": n, "article": a, "questions": list(q)} for n, a, q in nouns]
    return [(rows[i], rows[i + 1]) for i in range(0, len(rows) - 1, 2)]


def load_pairs(path: str | Path) -> list[tuple[dict, dict]]:
    """Pairs from a JSON file ``[{"noun", "article", "questions": [...]}, ...]`` (consecutive entries pair up)."""
    rows = read_json(path)  # components.io: a missing or malformed file is one DataError naming it
    if not isinstance(rows, list) or len(rows) < 2 or len(rows) % 2:
        raise DataError(f"{path}: expected an even-length JSON list of nouns")
    for r in rows:
        if not isinstance(r, dict) or r.get("article") not in ("a", "an") or len(r.get("questions", [])) < 2:
            raise DataError(f"{path}: each noun needs 'noun', 'article' (a/an) and at least 2 'questions'")
    return [(rows[i], rows[i + 1]) for i in range(0, len(rows), 2)]
